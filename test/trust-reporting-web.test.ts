// The web application shows a run that passed only after a failed attempt as flaky: on the run's page (which
// attempt passed, and what each failed attempt said), in the runs list and in a group run's results.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner } from "./helpers/browser";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let browser: Browser;
let page: Page;
let project: string;
let envId: string;

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project, envId } = await projectWithEnv(s, "Flaky web", { BASE_URL: target.url }));
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await target?.stop();
});

/** A flaky automation; each test makes its own (names are unique in a project). */
const flaky = (name = "checkout") =>
  createAutomation(s, project, {
    name,
    kind: "http",
    retries: 2,
    environment: envId,
    steps: [{ name: "get cart", request: { url: `/flaky/${crypto.randomUUID()}?fail=1` }, expect: [{ status: 200 }] }],
  });

test("a flaky run's page says it passed on attempt 2 of 3 and what the failed attempt said; the runs list marks it flaky", async () => {
  const run = await waitForRun(s, project, await startRun(s, project, await flaky()));
  expect(run.status).toBe("passed");
  await explained(page, "flaky-run", async () => {
    await page.goto(`${s.url}/#/p/${project}/runs/${run.id}`);
    const status = page.getByTestId("run-status");
    await status.getByText("flaky", { exact: true }).waitFor();
    expect(await status.innerText()).toContain("Passed on attempt 2 of 3");
    const attempts = page.getByTestId("run-attempts");
    await attempts.waitFor();
    expect(await attempts.locator("li").allInnerTexts()).toEqual([
      expect.stringMatching(/^failed\s+attempt 1 of 3[\s\S]*step 1 \(get cart\): status: expected 200, got 500/i),
      expect.stringMatching(/^passed\s+attempt 2 of 3/i),
    ]);
    await shot(page, "flaky-run");

    await page.goto(`${s.url}/#/p/${project}/runs`);
    const row = page.locator(`tr[data-run-id="${run.id}"]`);
    await row.locator(".badge-flaky").waitFor();
    expect(await row.locator(".badge-flaky").getAttribute("title")).toBe("Passed on attempt 2 of 3");
  });
});

test("a group run's page counts its flaky runs and marks the flaky one", async () => {
  const steady = await createAutomation(s, project, { name: "health", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
  const flakyId = await flaky("checkout in a group");
  const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "smoke", automation_ids: [flakyId, steady] }), 201);
  const groupRun = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
  await explained(page, "flaky-group-run", async () => {
    await page.goto(`${s.url}/#/p/${project}/group-runs/${groupRun.id}`);
    await page.getByText("2 passed (1 flaky)").waitFor();
    const rows = page.locator("tr[data-run-id]");
    expect(await rows.count()).toBe(2);
    expect(await page.locator("tr[data-run-id]", { hasText: "checkout in a group" }).locator(".badge-flaky").count()).toBe(1);
    expect(await page.locator("tr[data-run-id]", { hasText: "health" }).locator(".badge-flaky").count()).toBe(0);
  });
});

test("a group run's results count every run by its status, timed out included, and mark the quarantined failure apart", async () => {
  const steady = await createAutomation(s, project, { name: "steady", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
  const slow = await createAutomation(s, project, {
    name: "too slow",
    kind: "http",
    environment: envId,
    timeout_ms: 1000,
    steps: [{ request: { url: "/slow?ms=3000" } }],
  });
  const broken = await createAutomation(s, project, {
    name: "known broken",
    kind: "http",
    environment: envId,
    steps: [{ request: { url: "/status?code=500" }, expect: [{ status: 200 }] }],
  });
  await json(await s.call("PATCH", `/projects/${project}/automations/${broken}`, { quarantined: true }));
  const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "mixed", automation_ids: [steady, slow, broken] }), 201);
  const started = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
  const done = await json<{ status: string; summary: Record<string, number> }>(await s.call("GET", `/projects/${project}/group-runs/${started.id}?wait=30`));
  expect(done.status).toBe("failed");
  expect(done.summary).toMatchObject({ passed: 1, failed: 1, timed_out: 1, quarantined: 1 });
  await explained(page, "group-run-results", async () => {
    await page.goto(`${s.url}/#/p/${project}/group-runs/${started.id}`);
    const results = page.getByTestId("group-run-results");
    await results.waitFor();
    expect(await results.innerText()).toBe("1 passed · 1 failed · 1 timed out (1 quarantined: not counted)");
    const row = page.locator("tr[data-run-id]", { hasText: "known broken" });
    expect(await row.locator(".badge-quarantined").textContent()).toBe("quarantined");
    expect(await page.locator("tr[data-run-id]", { hasText: "too slow" }).locator(".badge-quarantined").count()).toBe(0);
    await shot(page, "group-run-results");
    // The project's "failing now" list says what each latest run came to: timed out is not a failed assertion.
    await page.goto(`${s.url}/#/p/${project}`);
    const failing = page.getByTestId("failing-now");
    await failing.waitFor();
    expect(await failing.locator("li", { hasText: "too slow" }).locator(".badge").textContent()).toBe("timed out");
    expect(await failing.locator("li", { hasText: "known broken" }).locator(".badge").textContent()).toBe("failed");
  });
});
