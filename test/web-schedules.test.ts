// The schedules & alerts page in headless Chromium against a real server: a schedule made with the form shows its
// interval and next due time and pauses; a webhook channel made with the form sends a signed test that the
// page then shows delivered; at 390 px nothing overflows sideways.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import { explained, launchBrowser, newPage, signInAsOwner } from "./helpers/browser";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let browser: Browser;
const events: (string | null)[] = [];
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    events.push(req.headers.get("x-svc-event"));
    return new Response(null, { status: 204 });
  },
});

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  browser = await launchBrowser();
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(await s.call("POST", "/projects/shop/automations", { name: "checkout", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] }), 201);
});
afterAll(async () => {
  await browser.close();
  await s.stop();
  await receiver.stop(true);
});

test("schedules and alert channels are made, paused and tested from the page, readable at 390 px", async () => {
  for (const width of [1280, 390]) {
    const { context, page } = await newPage(browser, width);
    await signInAsOwner(page, s.url);
    await explained(page, `schedules-${width}`, async () => {
      await page.goto(`${s.url}/#/p/shop/schedules`);
      const form = page.getByRole("form", { name: "New schedule" });
      await form.getByLabel("Schedule name").fill(`every five ${width}`);
      await form.getByLabel("Automation (name or id)").fill("checkout");
      await form.getByLabel("Every (seconds)").fill("300");
      await form.getByRole("button", { name: "Create schedule" }).click();
      const row = page.getByRole("row").filter({ hasText: `every five ${width}` });
      await row.getByText("every 300 s").waitFor();
      await row.getByRole("button", { name: "Pause" }).click();
      await row.getByRole("button", { name: "Resume" }).waitFor();
      const listed = await json<{ data: { name: string; enabled: boolean }[] }>(await s.call("GET", "/projects/shop/schedules"));
      expect(listed.data.find((x) => x.name === `every five ${width}`)?.enabled).toBe(false);

      const channel = page.getByRole("form", { name: "New alert channel" });
      await channel.getByLabel("Channel name").fill(`hook ${width}`);
      await channel.getByLabel("URL").fill(`http://127.0.0.1:${receiver.port}/hook`);
      await channel.getByLabel("Secret").fill("page-secret-1");
      await channel.getByRole("button", { name: "Create channel" }).click();
      const section = page.getByRole("region", { name: `Alert channel hook ${width}` });
      await section.getByRole("button", { name: "Send a test" }).click();
      await section.getByText(/test ·/).waitFor();
      await section.getByText("passed").or(section.getByText("delivered")).first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
    });
    await context.close();
  }
  expect(events).toEqual(["test", "test"]);
});
