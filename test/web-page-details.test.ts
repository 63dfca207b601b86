// Smaller behaviours of the web application's pages in headless Chromium against a real server: an automation's page
// follows runs of it started elsewhere (timeline, health, pass rate), the automations list marks a quarantined one,
// an unknown project is said once and titled, "New automation" and the Assistant panel keep the keyboard's focus,
// signing out asks nothing it would be refused, generation warnings say each thing once, and a malformed .json
// OpenAPI file is refused as JSON.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner } from "./helpers/browser";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let browser: Browser;
let page: Page;
let target: ReturnType<typeof Bun.serve>;
let project = "";
let envId = "";

beforeAll(async () => {
  target = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => (new URL(req.url).pathname === "/ok" ? Response.json({ ok: true }) : new Response("no", { status: 500 })),
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project, envId } = await projectWithEnv(s, "Shop", { BASE_URL: `http://127.0.0.1:${target.port}` }));
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  target?.stop(true);
});

test("an automation's page follows runs of it started elsewhere: its timeline, health and pass rate", () =>
  explained(page, "automation-page-live", async () => {
    const automation = await createAutomation(s, project, {
      name: "sometimes fails",
      kind: "http",
      environment: envId,
      steps: [{ request: { method: "GET", url: "/ok" }, expect: [{ status: 200 }] }],
    });
    await page.goto(`${s.url}/#/p/${project}/automations/${automation}`);
    const passRate = page.locator("dl.facts div", { has: page.locator("dt", { hasText: "Pass rate" }) }).locator("dd");
    await passRate.waitFor();
    expect(await passRate.innerText()).toBe("—");
    const timeline = page.locator("section.card", { has: page.getByRole("heading", { name: "Timeline of runs" }) });
    await timeline.getByText("No finished runs yet.").waitFor();
    // Started by CI, through the API: the open page shows its result, without a reload.
    await waitForRun(s, project, await startRun(s, project, automation));
    await passRate.getByText("100% of the last run").waitFor({ timeout: 20_000 });
    await timeline.getByText("No finished runs yet.").waitFor({ state: "detached", timeout: 10_000 });
    expect(await page.getByTestId("health").innerText()).not.toBe("unknown");
    await shot(page, "automation-page-live");
  }));

test("the automations list marks a quarantined automation beside its status", () =>
  explained(page, "automations-quarantined", async () => {
    const quarantined = await createAutomation(s, project, {
      name: "known flaky",
      kind: "http",
      environment: envId,
      steps: [{ request: { method: "GET", url: "/ok" }, expect: [{ status: 200 }] }],
    });
    await json(await s.call("PATCH", `/projects/${project}/automations/${quarantined}`, { quarantined: true }));
    await page.goto(`${s.url}/#/p/${project}/automations`);
    const row = page.locator("tr[data-automation='known flaky']");
    await row.waitFor();
    expect(await row.locator('[data-label="Status"]').innerText()).toBe("ACTIVE QUARANTINED");
    expect(await page.locator("tr[data-automation='sometimes fails'] .badge-quarantined").count()).toBe(0);
  }));

test("an unknown project's page says so once and is titled so", () =>
  explained(page, "project-not-found", async () => {
    for (const where of ["/p/nosuch", "/p/nosuch/runs"]) {
      // From another page first: a hash change keeps the page on screen until the new one renders, and the last
      // iteration's "Project not found" would answer every wait below before the new page's first render.
      await page.goto(`${s.url}/#/projects`);
      await page.waitForFunction(() => document.title === "Projects · svc");
      await page.goto(`${s.url}/#${where}`);
      await page.waitForFunction(() => document.title === "Project not found · svc");
      await page.getByRole("heading", { level: 1, name: "Project not found" }).waitFor();
      expect(await page.title()).toBe("Project not found · svc");
      const text = await page.locator("main").innerText();
      expect(text.match(/not found/gi)?.length).toBe(1);
    }
    // A project that exists keeps its section's title.
    await page.goto(`${s.url}/#/p/${project}/runs`);
    await page.waitForFunction(() => document.title === "Runs · Shop · svc");
  }));

test("Enter on New automation puts the focus in the form's first field", () =>
  explained(page, "new-automation-focus", async () => {
    await page.goto(`${s.url}/#/p/${project}/automations`);
    await page.getByRole("button", { name: "New automation" }).focus();
    await page.keyboard.press("Enter");
    const name = page.locator("section.card", { has: page.getByRole("heading", { name: "New automation" }) }).getByLabel("Name");
    await name.waitFor();
    await page.waitForFunction(() => document.activeElement?.tagName === "INPUT");
    expect(await name.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type("typed at once");
    expect(await name.inputValue()).toBe("typed at once");
  }));

test("Escape closes the Assistant panel and returns the focus to its button", () =>
  explained(page, "assistant-escape", async () => {
    await page.goto(`${s.url}/#/p/${project}/automations`);

    const opener = page.getByRole("button", { name: "Assistant" });
    await opener.click();
    const panel = page.getByRole("complementary", { name: "Assistant" });
    await panel.waitFor();
    // Opened, it has the focus (in its message field): Escape is pressed there.
    await page.waitForFunction(() => document.activeElement?.id === "assistant-text");
    await page.keyboard.press("Escape");
    await panel.waitFor({ state: "detached" });
    // The focus is back on the button that opened it (moved there once the panel is gone).
    await page.waitForFunction(() => document.activeElement?.tagName === "BUTTON" && document.activeElement.textContent === "Assistant");
    expect(await opener.evaluate((el) => el === document.activeElement)).toBe(true);
  }));

test("a generation's warnings say their line, text and suggestion once", () =>
  explained(page, "generation-warnings-once", async () => {
    const feature = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/features`, {
        name: "Odd phrasing",
        acceptance_criteria: `Scenario: the home page\n  Given I open "http://127.0.0.1:${target.port}/ok"\n  Then I shuold see "Gadgets"`,
      }),
      201,
    );
    await json(await s.call("POST", `/projects/${project}/features/${feature.id}/generation`, { strategy: "gherkin" }), 202);
    for (let i = 0; ; i++) {
      const g = await json<{ status: string }>(await s.call("GET", `/projects/${project}/features/${feature.id}/generation`));
      if (g.status !== "queued" && g.status !== "running") break;
      if (i > 200) throw new Error("the generation never ended");
      await Bun.sleep(50);
    }
    const g = await json<{ warnings: { message: string; line?: number; text?: string; suggestion?: string }[] }>(
      await s.call("GET", `/projects/${project}/features/${feature.id}/generation`),
    );
    const warned = g.warnings.find((w) => w.text !== undefined);
    expect(warned?.message).toContain(`Line ${warned?.line}`);
    await page.goto(`${s.url}/#/p/${project}/features/${feature.id}`);
    const item = page.getByTestId("generation").locator("ul.details li").first();
    await item.waitFor({ timeout: 20_000 });
    // The message says it all: nothing is added to it.
    expect(await item.innerText()).toBe(warned?.message ?? "");
    await shot(page, "generation-warnings-once");
  }));

test("a malformed .json OpenAPI file is said not to be valid JSON; a malformed .yaml one gets the YAML error", () =>
  explained(page, "openapi-file-errors", async () => {
    await page.goto(`${s.url}/#/p/${project}`);
    const file = page.getByLabel("OpenAPI file");
    await file.setInputFiles({ name: "shop.json", mimeType: "application/json", buffer: Buffer.from('{"openapi": "3.0.3", "info": {') });
    const error = page.locator(".note-error", { hasText: "shop.json" });
    await error.waitFor();
    const said = await error.innerText();
    expect(said).toStartWith("shop.json is not valid JSON: ");
    expect(said).not.toContain("Flow map");
    await file.setInputFiles({ name: "shop.yaml", mimeType: "application/yaml", buffer: Buffer.from("openapi: 3.0.3\ninfo: {title: Shop\n") });
    const yamlError = page.locator(".note-error", { hasText: "shop.yaml" });
    await yamlError.waitFor();
    expect(await yamlError.innerText()).toStartWith("shop.yaml is not valid YAML: ");
  }));

test("signing out asks the server nothing it would refuse", async () => {
  const { context, page: p } = await newPage(browser);
  await explained(p, "sign-out-quiet", async () => {
    await signInAsOwner(p, s.url);
    await p.goto(`${s.url}/#/p/${project}/automations`);
    await p.getByRole("button", { name: "New automation" }).waitFor();
    const refused: string[] = [];
    const errors: string[] = [];
    p.on("response", (r) => {
      if (r.status() === 401) refused.push(r.url());
    });
    p.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    // A slow answer to "who is signed in now?" (as over a real network): nothing is asked while it is awaited.
    await p.route("**/api/v1/web/session", async (route) => {
      await Bun.sleep(400);
      await route.continue();
    });
    await p.getByRole("button", { name: "Sign out" }).click();
    await p.getByRole("button", { name: "Sign in" }).waitFor();
    // Anything sent on the way out has had time to come back.
    await p.waitForTimeout(500);
    expect(refused).toEqual([]);
    expect(errors).toEqual([]);
  });
  await context.close();
});
