// The web application's state in its URL, in Chromium: links of earlier versions still open their pages, filters
// and the page of a list are in the URL (Back returns to the previous ones, a reload keeps them), a link can name
// the workspace it is for, and the focus comes back to the button that opened an inline confirmation or panel.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { createUserInWorkspace } from "../src/core/access/users";
import { explained, launchBrowser, newPage, signInAsOwner } from "./helpers/browser";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(120_000);

let s: TestServer;
let browser: Browser;
let page: Page;
let project = "";
const ids: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const env = await projectWithEnv(s, "Linked shop", { BASE_URL: s.url });
  project = env.project;
  ids.feature = (await json<{ id: string }>(await s.call("POST", `/projects/${project}/features`, { name: "Checkout" }), 201)).id;
  ids.passing = await createAutomation(s, project, {
    name: "session answers",
    kind: "http",
    environment: env.envId,
    steps: [{ request: { method: "GET", url: "/api/v1/web/session" }, expect: [{ status: 200 }] }],
  });
  ids.failing = await createAutomation(s, project, {
    name: "session is missing",
    kind: "http",
    environment: env.envId,
    steps: [{ request: { method: "GET", url: "/api/v1/web/session" }, expect: [{ status: 404 }] }],
  });
  ids.run = await startRun(s, project, ids.failing);
  await waitForRun(s, project, ids.run);
  // More than one page of runs (50 a page).
  for (let i = 0; i < 50; i++) await startRun(s, project, ids.passing);
  ids.group = (await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "smoke", automation_ids: [ids.passing] }), 201)).id;
  ids.groupRun = (await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/${ids.group}/run`, {}), 202)).id;
  await createUserInWorkspace(s.server.core.db, { email: "owner@acme.test", name: "owner", workspace: "globex", role: "member" });
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const h1 = () => page.locator("h1").first();

test("links of earlier versions open their pages", () =>
  explained(page, "url-old-links", async () => {
    const links: [string, string | RegExp][] = [
      [`/#/p/${project}/automations/${ids.passing}`, /^session answers/],
      [`/#/p/${project}/runs/${ids.run}`, "Run of session is missing"],
      [`/#/p/${project}/features/${ids.feature}`, "Checkout"],
      [`/#/p/${project}/groups/${ids.group}`, "smoke"],
      [`/#/p/${project}/group-runs/${ids.groupRun}`, "Group run of smoke"],
      [`/#/p/${project}/runs`, "Runs"],
      [`/#/p/${project}`, "Overview"],
      ["/#/members", "Members of acme"],
      ["/#/settings/keys", "CLI & API keys"],
      ["/#/settings/runners", "Runners"],
      ["/#/projects", "Projects"],
      ["/#/", "Dashboard"],
    ];
    const seen: Record<string, string> = {};
    for (const [link] of links) {
      await page.goto(`${s.url}${link}`);
      await h1().waitFor();
      await page.waitForFunction(() => !/Loading/.test(document.body.innerText));
      seen[link] = (await h1().innerText()).trim();
    }
    for (const [link, heading] of links) expect({ link, heading: seen[link] }).toEqual({ link, heading: expect.stringMatching(heading) as unknown as string });
  }));

test("the runs list keeps its filters and page in the URL: Back returns to the previous ones, a reload keeps them", () =>
  explained(page, "url-runs-filters", async () => {
    await page.goto(`${s.url}/#/p/${project}/runs`);
    const rows = page.locator("tbody tr[data-run-id]");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(50);
    await page.getByRole("button", { name: "Older runs" }).click();
    await page.waitForURL((u) => u.hash.includes("cursor="));
    await page.getByRole("button", { name: "First page" }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll("tbody tr[data-run-id]").length === 2);
    await page.goBack();
    await page.waitForURL((u) => u.hash === `#/p/${project}/runs`);
    await page.waitForFunction(() => document.querySelectorAll("tbody tr[data-run-id]").length === 50);

    await page.getByLabel("Status").selectOption("failed");
    await page.waitForURL((u) => u.hash === `#/p/${project}/runs?status=failed`);
    await page.waitForFunction(() => document.querySelectorAll("tbody tr[data-run-id]").length === 1);
    expect(await rows.first().getAttribute("data-run-id")).toBe(ids.run ?? "");
    await page.reload();
    await page.locator(`tr[data-run-id='${ids.run}']`).waitFor();
    expect(await page.getByLabel("Status").inputValue()).toBe("failed");
    expect(await rows.count()).toBe(1);
    await page.goBack();
    await page.waitForURL((u) => u.hash === `#/p/${project}/runs`);
    await page.waitForFunction(() => document.querySelectorAll("tbody tr[data-run-id]").length === 50);
    expect(await page.getByLabel("Status").inputValue()).toBe("");
  }));

test("the automations list keeps its filters in the URL", () =>
  explained(page, "url-automation-filters", async () => {
    await page.goto(`${s.url}/#/p/${project}/automations?q=missing`);
    await page.getByRole("link", { name: "session is missing" }).waitFor();
    expect(await page.getByRole("link", { name: "session answers" }).count()).toBe(0);
    expect(await page.getByLabel("Search").inputValue()).toBe("missing");
    await page.getByLabel("Search").fill("");
    await page.getByRole("link", { name: "session answers" }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/p/${project}/automations`);
  }));

test("automations picked and then hidden by a filter neither run unseen nor take away the run button", () =>
  explained(page, "url-automation-picks", async () => {
    await page.goto(`${s.url}/#/p/${project}/automations`);
    await page.getByLabel("Select session answers").check();
    await page.getByRole("button", { name: "Run selected (1)" }).waitFor();
    await page.getByLabel("Search").fill("missing");
    await page.getByRole("link", { name: "session is missing" }).waitFor();
    await page.getByRole("button", { name: "Run all shown (1)" }).waitFor();
    await page.getByLabel("Search").fill("");
    await page.getByRole("button", { name: "Run selected (1)" }).waitFor();
  }));

test("a link with a stray % shows that nothing is there, and the application goes on working", () =>
  explained(page, "url-stray-percent", async () => {
    await page.goto(`${s.url}/#/p/${project}/automations/50%`);
    await page.getByText(`no automation named "50%"`).waitFor();
    await page.getByRole("link", { name: "Projects", exact: true }).first().click();
    await page.getByRole("heading", { level: 1, name: "Projects" }).waitFor();
  }));

test("a link can name its workspace: it opens there", () =>
  explained(page, "url-workspace", async () => {
    await page.goto(`${s.url}/#/projects?ws=globex`);
    await page.getByLabel("Workspace").locator("option:checked").getByText("globex").waitFor({ state: "attached" });
    await page.getByText("No projects yet", { exact: false }).waitFor();
    await page.goto(`${s.url}/#/projects?ws=acme`);
    await page.getByRole("link", { name: "Linked shop" }).waitFor();
    // A link into another workspace's project asks nothing of the current workspace before it switches (it got
    // three 404s for the project, its runs and environments).
    await page.goto(`${s.url}/#/projects?ws=globex`);
    await page.getByText("No projects yet", { exact: false }).waitFor();
    const refused: string[] = [];
    const onResponse = (r: { status(): number; url(): string }) => {
      if (r.url().includes("/api/v1/ops/") && r.status() >= 400) refused.push(`${r.status()} ${r.url()}`);
    };
    page.on("response", onResponse);
    await page.goto(`${s.url}/#/p/${project}?ws=acme`);
    await page.getByLabel("Workspace").locator("option:checked").getByText("acme").waitFor({ state: "attached" });
    await page.waitForFunction(() => document.title.includes("Linked shop"));
    page.off("response", onResponse);
    expect(refused).toEqual([]);
    await page.goto(`${s.url}/#/projects?ws=initech`);
    await page.getByRole("alert").getByText('This link is for workspace "initech"').waitFor();
  }));

test("the focus comes back to the button that opened an inline confirmation or the assistant", () =>
  explained(page, "url-focus", async () => {
    await page.goto(`${s.url}/#/p/${project}`);
    const del = page.getByRole("button", { name: "Delete project" });
    // The focus moves in an effect just after the render: wait for it to land where it should.
    const focusOn = (text: string) => page.waitForFunction((t) => document.activeElement?.textContent === t, text, { timeout: 5000 });
    await del.click();
    await focusOn("Cancel");
    await page.getByRole("button", { name: "Cancel" }).click();
    await focusOn("Delete project");
    await del.click();
    await focusOn("Cancel");
    await page.keyboard.press("Escape");
    await focusOn("Delete project");

    const opener = page.getByRole("button", { name: "Assistant" });
    await opener.click();
    const panel = page.getByRole("complementary", { name: "Assistant" });
    await panel.waitFor();
    await page.waitForFunction(() => document.activeElement?.id === "assistant-text", undefined, { timeout: 5000 });
    await panel.getByRole("button", { name: "Close" }).click();
    await panel.waitFor({ state: "detached" });
    await focusOn("Assistant");
  }));
