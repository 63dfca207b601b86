// The whole path in the browser, with the real generation and run engines: create a project and a feature,
// generate drafts from its Gherkin, add a screenshot step in the editor, run the draft, and see the run's
// steps and screenshot; then a group run of it.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner, replaceEditorText } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let browser: Browser;
let page: Page;
let site: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  // The product under test: one small page on a free loopback port.
  site = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response("<!doctype html><title>Tiny shop</title><h1>Welcome to the tiny shop</h1><p>Fresh items daily.</p>", {
        headers: { "content-type": "text/html" },
      }),
  });
  s = await startTestServer();
  browser = await launchBrowser();
  page = (await newPage(browser)).page;
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  site?.stop(true);
});

test("project → feature → generate → run a draft → the run's steps and screenshot", () =>
  explained(page, "project-feature-generate-run-a-draft-the", async () => {
    const home = `http://127.0.0.1:${site.port}/`;
    await page.goto(`${s.url}/#/projects`);
    await page.getByLabel("Project name").fill("Tiny shop");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.waitForURL(/#\/p\/tiny-shop$/);
    await page.getByRole("link", { name: "Features" }).click();
    await page.getByLabel("Feature name").fill("Home page");
    await page.getByRole("button", { name: "Create feature" }).click();
    await page.waitForURL(/features\/fea_/);
    await page
      .getByLabel("Acceptance criteria")
      .fill(`Scenario: the home page greets visitors\n  Given I open "${home}"\n  Then I should see "Welcome to the tiny shop"\n  And I wave at the visitor`);
    await page.getByLabel("Target").selectOption("web");
    await page.getByLabel("Page URL").fill(home);
    await page.getByRole("button", { name: "Save feature" }).click();
    await page.getByLabel("Strategy").selectOption("gherkin");
    await page.getByRole("button", { name: "Generate automations" }).click();
    const gen = page.getByTestId("generation");
    await gen.getByText("succeeded").waitFor({ timeout: 30_000 });
    expect(await gen.innerText()).toContain("I wave at the visitor");
    const draft = page.locator("ul.links li", { hasText: "draft" }).first();
    await draft.waitFor();
    await shot(page, "flow-feature-generated");

    await draft.getByRole("link").click();
    await page.waitForURL(/automations\/aut_/);
    const editor = page.getByRole("textbox", { name: "Steps", exact: true });
    const steps = JSON.parse(await editor.innerText()) as unknown[];
    expect(steps.length).toBeGreaterThan(0);
    await replaceEditorText(page, editor, JSON.stringify([...steps, { screenshot: "greeting" }]));
    await page.getByTestId("steps-valid").waitFor();
    const saved = page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes("/automations/"));
    await page.getByRole("button", { name: "Save automation" }).click();
    expect((await saved).status()).toBe(200);
    await page.getByRole("button", { name: "Run now" }).click();
    await page.waitForURL(/runs\/run_/);
    await page.getByTestId("run-status").getByText("passed").waitFor({ timeout: 45_000 });
    const img = page.locator("img.shot").first();
    await img.waitFor();
    await page.waitForFunction(() => {
      const i = document.querySelector("img.shot") as HTMLImageElement | null;
      return !!i && i.complete && i.naturalWidth > 0;
    });
    expect(await page.locator("li.step").count()).toBe(steps.length + 1);
    expect(await page.locator("li.step-passed").count()).toBe(steps.length + 1);
    await shot(page, "flow-run-passed");
    const junit = await page.evaluate(async () => {
      const href = document.querySelector("a[download]")?.getAttribute("href") ?? "";
      const r = await fetch(href);
      return { type: r.headers.get("content-type") ?? "", body: await r.text() };
    });
    expect(junit.type).toContain("xml");
    expect(junit.body).toContain("<testsuite");
  }));

test("a group of the draft runs, and its results show together", () =>
  explained(page, "a-group-of-the-draft-runs-and-its-result", async () => {
    await page.goto(`${s.url}/#/p/tiny-shop/groups`);
    await page.getByLabel("Group name").fill("smoke");
    await page.getByRole("button", { name: "Create group" }).click();
    await page.waitForURL(/groups\/grp_/);
    const select = page.getByLabel("Add automation");
    const label = (await select.locator("option").nth(1).innerText()).trim();
    await select.selectOption({ label });
    await page.getByRole("button", { name: "Add", exact: true }).click();
    const saved = page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes("/groups/"));
    await page.getByRole("button", { name: "Save group" }).click();
    expect((await saved).status()).toBe(200);
    await page.locator("button:not([disabled])", { hasText: "Run group" }).click();
    await page.waitForURL(/group-runs\/grn_/);
    await page.getByTestId("group-run-status").getByText("passed").waitFor({ timeout: 45_000 });
    expect(await page.locator("tr[data-run-id]").count()).toBe(1);
    await shot(page, "flow-group-run");
    await page.goto(`${s.url}/#/`);
    await page.locator("[data-project='tiny-shop'] [data-testid='pass-rate']").getByText("100% passing now").waitFor();
    await shot(page, "flow-dashboard");
  }));

test("a running run updates live and can be cancelled from its page", () =>
  explained(page, "a-running-run-updates-live-and-can-be-ca", async () => {
    const home = `http://127.0.0.1:${site.port}/`;
    const created = await s.call("POST", "/projects/tiny-shop/automations", {
      name: "waits for a text that never comes",
      kind: "browser",
      steps: [{ goto: home }, { wait_for: { text: "never shown" }, timeout_ms: 30_000 }],
    });
    expect(created.status).toBe(201);
    const aut = await created.json();
    await page.goto(`${s.url}/#/p/tiny-shop/automations/${aut.id}`);
    await page.getByRole("button", { name: "Run now" }).click();
    await page.waitForURL(/runs\/run_/);
    await page.getByTestId("run-status").getByText("running").waitFor({ timeout: 20_000 });
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.getByTestId("run-status").getByText("cancelled").waitFor({ timeout: 20_000 });
    const runId = page.url().split("/").pop() ?? "";
    expect((await (await s.call("GET", `/projects/tiny-shop/runs/${runId}`)).json()).status).toBe("cancelled");
  }));
