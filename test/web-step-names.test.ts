// Step names as people read them, in run results and on the web app's run page (headless Chromium): a locator
// reads as the name on the page (`click "Sign in"`, `fill "Email"`), never as a selector chain, and a run recorded
// with such a chain in its step name reads the same way.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, signInAsOwner, watch } from "./helpers/browser";
import { createAutomation, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let site: ReturnType<typeof Bun.serve>;
let browser: Browser;
let page: Page;

const PAGE = `<!doctype html><title>Sign in</title><h1>Sign in</h1>
<label>Email <input name="email"></label>
<button onclick="document.getElementById('out').textContent = 'Welcome'">Sign in</button><p id="out"></p>`;

beforeAll(async () => {
  site = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(PAGE, { headers: { "content-type": "text/html" } }) });
  s = await startTestServer();
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US", timezoneId: "UTC" });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  watch(page);
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  site?.stop(true);
});

test('run step names read as click "Sign in", and so does the run page, also for a name recorded with Playwright\'s internal selector chain', () =>
  explained(page, "run-step-names", async () => {
    const { project } = await projectWithEnv(s, "Step names", { BASE_URL: `http://127.0.0.1:${site.port}` });
    const automation = await createAutomation(s, project, {
      name: "Sign in",
      kind: "browser",
      steps: [
        { goto: "/" },
        { click: 'role=button[name="Sign in"]' },
        { fill: { locator: 'label="Email"', value: "a@b.c" } },
        { expect: { text: "Welcome", visible: 'role=heading[name="Sign in"]' } },
      ],
    });
    const runId = await startRun(s, project, automation, { environment: "test" });
    const run = await waitForRun(s, project, runId);
    expect(run.status).toBe("passed");
    expect(run.steps.map((x) => x.name)).toEqual(["goto /", 'click "Sign in"', 'fill "Email"', 'expect text "Welcome", visible heading "Sign in"']);

    // A run recorded by an earlier version named the click by its selector chain.
    const legacy = 'click internal:role=button[name="Sign in"s] >> internal:or="internal:role=link[name=\\"Sign in\\"s]"';
    const [row] = await s.sql<{ results: string }>("SELECT results FROM runs WHERE id = ?", runId);
    await s.sql("UPDATE runs SET results = ? WHERE id = ?", (row?.results ?? "").replace('"click \\"Sign in\\""', JSON.stringify(legacy)), runId);
    expect((await s.sql<{ results: string }>("SELECT results FROM runs WHERE id = ?", runId))[0]?.results).toContain("internal:role=button");

    await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
    const titles = page.locator(".step-head strong");
    await titles.nth(3).waitFor();
    expect((await titles.allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim())).toEqual([
      "1. goto /",
      '2. click "Sign in"',
      '3. fill "Email"',
      '4. expect text "Welcome", visible heading "Sign in"',
    ]);
    expect(await page.locator("main").innerText()).not.toContain("internal:");
  }));
