// The schedules & alerts page in headless Chromium against a real server: a schedule made with the form shows its
// interval and next due time and pauses; cron schedules with a time zone, of a group or of tags, show their target
// and the next due times the API computed; a webhook channel made with the form sends a signed test that the
// page then shows delivered (and a delivery tried again, pending); at 390 px nothing overflows sideways.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import { explained, launchBrowser, newPage, signInAsOwner } from "./helpers/browser";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";

setDefaultTimeout(60_000);

let s: TestServer;
let browser: Browser;
const events: (string | null)[] = [];
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    // A receiver that is down: its deliveries are tried again later.
    if (new URL(req.url).pathname === "/down") return new Response("down", { status: 503 });
    events.push(req.headers.get("x-svc-event"));
    return new Response(null, { status: 204 });
  },
});

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  browser = await launchBrowser();
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  const checkout = await json<{ id: string }>(
    await s.call("POST", "/projects/shop/automations", {
      name: "checkout",
      kind: "http",
      tags: ["smoke"],
      steps: [{ request: { url: "http://127.0.0.1:9/" } }],
    }),
    201,
  );
  await json(await s.call("POST", "/projects/shop/groups", { name: "nightly", automation_ids: [checkout.id] }), 201);
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
      // What it runs, by name (the record keeps the id).
      await row.getByText("automation checkout").waitFor();
      await row.getByRole("button", { name: "Pause" }).click();
      await row.getByRole("button", { name: "Resume" }).waitFor();
      const listed = await json<{ data: { name: string; enabled: boolean }[] }>(await s.call("GET", "/projects/shop/schedules"));
      expect(listed.data.find((x) => x.name === `every five ${width}`)?.enabled).toBe(false);

      // A cron schedule in a time zone: of tags at one width, of a group at the other.
      const byTags = width === 1280;
      await form.getByLabel("Schedule name").fill(`nightly ${width}`);
      await form.getByLabel("Runs").selectOption(byTags ? "tags" : "group");
      await form.getByLabel(byTags ? "Tags (any of, comma-separated)" : "Group (name or id)").fill(byTags ? "SMOKE, api" : "nightly");
      await form.getByLabel("Timing").selectOption("cron");
      await form.getByLabel("Cron (5 fields)").fill("30 2 * * *");
      await form.getByLabel("Time zone").fill("Europe/Berlin");
      await form.getByRole("button", { name: "Create schedule" }).click();
      const cronRow = page.getByRole("row").filter({ hasText: `nightly ${width}` });
      await cronRow.getByText("30 2 * * * (Europe/Berlin)").waitFor();
      const made = (
        await json<{ data: { name: string; target: Record<string, unknown>; next_runs_at: string[] }[] }>(await s.call("GET", "/projects/shop/schedules"))
      ).data.find((x) => x.name === `nightly ${width}`);
      expect(made?.target).toEqual(byTags ? { tags: ["SMOKE", "api"] } : { group: expect.stringMatching(/.+/) });
      await cronRow.getByText(byTags ? "tags: SMOKE, api" : "group nightly").waitFor();
      const due = cronRow.getByRole("list", { name: `Next due times of nightly ${width}` }).locator("time");
      expect(await due.evaluateAll((ts) => ts.map((t) => t.getAttribute("datetime")))).toEqual(made?.next_runs_at.slice(0, 3) ?? []);
      // 02:30 in Berlin is 00:30 or 01:30 UTC, by the season.
      expect(made?.next_runs_at.every((t) => /T0[01]:30:00/.test(t))).toBe(true);

      // A bad cron is the API's 400, shown on the form; nothing is made.
      await form.getByLabel("Schedule name").fill(`broken ${width}`);
      await form.getByLabel("Cron (5 fields)").fill("61 * * * *");
      await form.getByRole("button", { name: "Create schedule" }).click();
      await form.locator("xpath=..").getByRole("alert").filter({ hasText: "cron" }).waitFor();
      const names = (await json<{ data: { name: string }[] }>(await s.call("GET", "/projects/shop/schedules"))).data.map((x) => x.name);
      expect(names).not.toContain(`broken ${width}`);

      const channel = page.getByRole("form", { name: "New alert channel" });
      await channel.getByLabel("Channel name").fill(`hook ${width}`);
      await channel.getByLabel("URL").fill(`http://127.0.0.1:${receiver.port}/hook`);
      await channel.getByLabel("Secret").fill("page-secret-1");
      await channel.getByRole("button", { name: "Create channel" }).click();
      const section = page.getByRole("region", { name: `Alert channel hook ${width}` });
      await section.getByRole("button", { name: "Send a test" }).click();
      await section.getByText(/test ·/).waitFor();
      await section.locator("li .badge-delivered").getByText("delivered").waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
    });
    await context.close();
  }
  expect(events).toEqual(["test", "test"]);
});

test("a channel's deliveries are badged in their own words: delivered, and pending while one is tried again", async () => {
  const { context, page } = await newPage(browser);
  const channels: Record<string, string> = {};
  await signInAsOwner(page, s.url);
  await explained(page, "alert-delivery-badges", async () => {
    const deliveries = async (channel: string) =>
      (await json<{ data: { status: string; attempts: number }[] }>(await s.call("GET", `/projects/shop/alert-channels/${channel}/deliveries`))).data;
    const made: [string, string][] = [
      ["reaches", "/hook"],
      ["is down", "/down"],
    ];
    for (const [name, path] of made) {
      const channel = await json<{ id: string }>(
        await s.call("POST", "/projects/shop/alert-channels", {
          name,
          kind: "webhook",
          url: `http://127.0.0.1:${receiver.port}${path}`,
          secret: "page-secret-2",
        }),
        201,
      );
      channels[name] = channel.id;
      await json(await s.call("POST", `/projects/shop/alert-channels/${channel.id}/test`), 202);
    }
    expect(await waitUntilAsync(async () => (await deliveries(channels.reaches ?? ""))[0]?.status === "delivered", 10_000)).toBe(true);
    // Its first attempt failed: it waits for the next one.
    expect(await waitUntilAsync(async () => (await deliveries(channels["is down"] ?? ""))[0]?.attempts === 1, 10_000)).toBe(true);
    expect((await deliveries(channels["is down"] ?? ""))[0]?.status).toBe("pending");

    await page.goto(`${s.url}/#/p/shop/schedules`);
    const reaches = page.getByRole("region", { name: "Alert channel reaches" });
    await reaches.locator(".badge").first().waitFor();
    expect(await reaches.locator("li .badge").allInnerTexts()).toEqual(["DELIVERED"]);
    const down = page.getByRole("region", { name: "Alert channel is down" });
    await down.locator("li .badge").first().waitFor();
    expect(await down.locator("li .badge").allInnerTexts()).toEqual(["PENDING"]);
    expect(await down.locator("li").first().innerText()).toMatch(/ · \d+ attempts? · next attempt /);
  });
  for (const id of Object.values(channels)) expect((await s.call("DELETE", `/projects/shop/alert-channels/${id}`)).status).toBe(204);
  await context.close();
});

test("a schedule or alert channel changed elsewhere since the page showed it: Pause and Delete say so, change nothing, and reload", async () => {
  await json(await s.call("POST", "/projects/shop/schedules", { name: "stale one", target: { tags: ["smoke"] }, interval_seconds: 600 }), 201);
  await json(await s.call("POST", "/projects/shop/alert-channels", { name: "stale hook", kind: "slack", url: "https://hooks.example.test/x" }), 201);
  const { context, page } = await newPage(browser, 1280);
  await signInAsOwner(page, s.url);
  await explained(page, "schedules-stale", async () => {
    await page.goto(`${s.url}/#/p/shop/schedules`);
    const row = page.getByRole("row").filter({ hasText: "stale one" });
    await row.getByText("every 600 s").waitFor();
    const section = page.getByRole("region", { name: "Alert channel stale hook" });
    await section.waitFor();
    // Someone else changes both while the page shows them.
    await json(await s.call("PATCH", "/projects/shop/schedules/stale%20one", { interval_seconds: 900 }));
    await json(await s.call("PATCH", "/projects/shop/alert-channels/stale%20hook", { remind_every: 3600 }));

    await row.getByRole("button", { name: "Pause" }).click();
    const notice = page.getByRole("alertdialog");
    await notice.getByText("This schedule stale one was changed elsewhere since you opened this page: reload it before you change it").waitFor();
    expect((await json<{ enabled: boolean }>(await s.call("GET", "/projects/shop/schedules/stale%20one"))).enabled).toBe(true);
    await notice.getByRole("button", { name: "Reload" }).click();
    await row.getByText("every 900 s").waitFor();

    await section.getByRole("button", { name: "Delete" }).click();
    await section.getByRole("button", { name: "Yes, delete" }).click();
    await section.getByRole("alertdialog").getByText("reload it before you delete it").waitFor();
    expect((await s.call("GET", "/projects/shop/alert-channels/stale%20hook")).status).toBe(200);
  });
  await context.close();
});

test("a schedule that fires while the page is open: the row shows its last fire without a reload, and Pause works", async () => {
  const made = await json<{ id: string }>(
    await s.call("POST", "/projects/shop/schedules", { name: "every ten", target: { automation: "checkout" }, interval_seconds: 10 }),
    201,
  );
  const { context, page } = await newPage(browser, 1280);
  try {
    await signInAsOwner(page, s.url);
    await page.goto(`${s.url}/#/p/shop/schedules`);
    const row = page.getByRole("row").filter({ hasText: "every ten" });
    await row.getByText("every 10 s").waitFor();
    // It fires within ten seconds; the page reads it again by itself, with a link to the run it started.
    await row.locator('[data-label="Last"]').filter({ hasNotText: "never" }).waitFor({ timeout: 25_000 });
    const fired = await json<{ last_fire: { run_id: string } }>(await s.call("GET", `/projects/shop/schedules/${made.id}`));
    expect(await row.getByRole("link", { name: "its run" }).getAttribute("href")).toBe(`#/p/shop/runs/${fired.last_fire.run_id}`);
    // Its firing is not an edit: Pause from the version shown is taken, not refused as changed elsewhere.
    await row.getByRole("button", { name: "Pause" }).click();
    await row.getByRole("button", { name: "Resume" }).waitFor();
    expect(await page.getByText("changed elsewhere").count()).toBe(0);
    expect((await json<{ enabled: boolean }>(await s.call("GET", `/projects/shop/schedules/${made.id}`))).enabled).toBe(false);
  } finally {
    await context.close();
  }
});

test("a member sees the alert channels and may send a test, without the form or Delete: channels are set by owners and admins", async () => {
  await json(
    await s.call("POST", "/projects/shop/alert-channels", {
      name: "paging",
      kind: "webhook",
      url: `http://127.0.0.1:${receiver.port}/hook`,
      secret: "paging-secret",
    }),
    201,
  );
  await s.userWithKey("member@acme.test", "acme", "member");
  const { context, page } = await newPage(browser, 1280);
  await signInAsOwner(page, s.url, "member@acme.test");
  await explained(page, "schedules-member", async () => {
    await page.goto(`${s.url}/#/p/shop/schedules`);
    const channel = page.getByRole("region", { name: "Alert channel paging" });
    await channel.getByRole("button", { name: "Send a test" }).waitFor();
    await page.getByText("Alert channels are set by the workspace's owners and admins.").waitFor();
    expect(await page.getByRole("form", { name: "New alert channel" }).count()).toBe(0);
    expect(await channel.getByRole("button", { name: "Delete" }).count()).toBe(0);
    await channel.getByRole("button", { name: "Send a test" }).click();
    await channel.getByText("test").first().waitFor();
  });
  await context.close();
});

test("a due time skipped because the schedule's previous run had not ended: the row says so, with why", async () => {
  const made = await json<{ id: string }>(
    await s.call("POST", "/projects/shop/schedules", { name: "hourly", target: { automation: "checkout" }, interval_seconds: 3600 }),
    201,
  );
  // What the scheduler writes for such a due time (test/schedules-fires.test.ts makes one for real).
  const at = new Date().toISOString();
  await s.sql(
    "INSERT INTO schedule_fires (schedule_id, due_at, fired_at, run_id, group_run_id, error, skipped) VALUES (?, ?, ?, NULL, NULL, NULL, ?)",
    made.id,
    at,
    at,
    "the run it started at 09:00 has not ended",
  );
  await s.sql("UPDATE schedules SET last_fired_at = ? WHERE id = ?", at, made.id);
  const { context, page } = await newPage(browser, 1280);
  try {
    await signInAsOwner(page, s.url);
    await page.goto(`${s.url}/#/p/shop/schedules`);
    const row = page.getByRole("row").filter({ hasText: "hourly" });
    await row.locator('[data-label="Last"]').getByText("skipped: the run it started at 09:00 has not ended").waitFor();
  } finally {
    await context.close();
  }
});
