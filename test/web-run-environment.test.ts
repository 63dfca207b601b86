// In headless Chromium against a real server: every run action offers an environment. Generated drafts have no
// default environment, so "Run all" waits for one to be chosen (the project has two); the runs then use it and pass
// instead of ending `error`, the choice is remembered as the default next time, and the run page shows the
// environment, who started it and the trigger.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import { createFeature, generate, waitForGeneration } from "./helpers/gen-flow";
import { launchBrowser, newPage, signInAsOwner, watch } from "./helpers/browser";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(90_000);

let s: TestServer;
let target: TargetApp;
let browser: Browser;

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await target?.stop();
});

interface ListedRun {
  automation_id: string;
  environment_id: string | null;
  status: string;
}

test("generated drafts: Run all asks for an environment, runs in the chosen one and passes; the choice is the next default", async () => {
  expect((await s.call("POST", "/projects", { name: "Pick", slug: "pick" })).status).toBe(201);
  const staging = await json<{ id: string }>(
    await s.call("POST", "/projects/pick/environments", { name: "staging", variables: { BASE_URL: target.url } }),
    201,
  );
  await json(await s.call("POST", "/projects/pick/environments", { name: "decoy", variables: { BASE_URL: "http://127.0.0.1:9" } }), 201);
  const feature = await createFeature(s, "pick", {
    name: "Health",
    acceptance_criteria: `Feature: Health\n  Scenario: the service is up\n    When I send GET "/health"\n    Then the response status should be 200\n`,
  });
  await generate(s, "pick", feature, "gherkin");
  const gen = await waitForGeneration(s, "pick", feature);
  expect(gen.status).toBe("succeeded");
  const drafts = (await json<{ data: { id: string; environment_id: string | null }[] }>(await s.call("GET", `/projects/pick/automations?feature=${feature}`)))
    .data;
  expect(drafts.length).toBeGreaterThan(0);
  expect(drafts.every((d) => d.environment_id === null)).toBe(true);

  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  await page.goto(`${s.url}/#/p/pick/features/${feature}`);
  const run = page.getByRole("button", { name: /^Run (it|all)/ });
  await run.waitFor();
  // No default for drafts and two environments: nothing runs until one is chosen.
  expect(await run.isDisabled()).toBe(true);
  await page.getByLabel("Environment").selectOption({ label: "staging" });
  await run.click();
  // The group run it started opens.
  await page.waitForURL(/#\/p\/pick\/group-runs\/[^/]+$/);

  const ended = async () => {
    for (let i = 0; i < 300; i++) {
      const runs = (await json<{ data: ListedRun[] }>(await s.call("GET", "/projects/pick/runs?limit=50"))).data;
      if (runs.length >= drafts.length && runs.every((r) => r.status !== "queued" && r.status !== "running")) return runs;
      await Bun.sleep(100);
    }
    throw new Error("the runs did not end");
  };
  const runs = await ended();
  expect(runs.map((r) => r.environment_id)).toEqual(drafts.map(() => staging.id));
  expect(runs.map((r) => r.status)).toEqual(drafts.map(() => "passed"));
  // The runs list shows where and by whom.
  await page.goto(`${s.url}/#/p/pick/runs`);
  await page.locator("tr[data-run-id]").first().getByText("staging").waitFor();
  expect(await page.locator("tr[data-run-id]").first().innerText()).toContain("owner@acme.test");

  // Next time, the environment last used in this project is the default.
  await page.goto(`${s.url}/#/p/pick/features/${feature}`);
  await run.waitFor();
  expect(await page.getByLabel("Environment").inputValue()).toBe(staging.id);
  expect(await run.isDisabled()).toBe(false);
});

test("the automations list runs the selected ones as one group run, in the environment chosen beside the button", async () => {
  expect((await s.call("POST", "/projects", { name: "Selected", slug: "selected" })).status).toBe(201);
  const staging = await json<{ id: string }>(
    await s.call("POST", "/projects/selected/environments", { name: "staging", variables: { BASE_URL: target.url } }),
    201,
  );
  await json(await s.call("POST", "/projects/selected/environments", { name: "decoy", variables: { BASE_URL: "http://127.0.0.1:9" } }), 201);
  for (const name of ["first", "second", "not picked"]) {
    await json(
      await s.call("POST", "/projects/selected/automations", { name, kind: "http", steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }] }),
      201,
    );
  }
  const { page } = await newPage(browser);
  watch(page);
  await signInAsOwner(page, s.url);
  await page.goto(`${s.url}/#/p/selected/automations`);
  await page.getByRole("checkbox", { name: "Select first" }).check();
  await page.getByRole("checkbox", { name: "Select second" }).check();
  const run = page.getByRole("button", { name: "Run selected (2)" });
  await run.waitFor();
  expect(await run.isDisabled()).toBe(true);
  await page.getByLabel("Environment").selectOption({ label: "staging" });
  await run.click();
  await page.waitForURL(/group-runs\/grn_/);
  await page.getByTestId("group-run-status").getByText("passed").waitFor({ timeout: 30_000 });
  const id = page.url().split("/group-runs/")[1] ?? "";
  const gr = await json<{ environment_id: string; runs: { automation_name: string; environment_id: string }[]; started_by: { kind: string; name: string } }>(
    await s.call("GET", `/projects/selected/group-runs/${id}`),
  );
  expect(gr.runs.map((r) => r.automation_name).sort()).toEqual(["first", "second"]);
  expect(gr.runs.every((r) => r.environment_id === staging.id)).toBe(true);
  expect(gr.started_by).toEqual({ kind: "user", name: "owner@acme.test" });
  expect(await page.getByTestId("run-started-by").innerText()).toBe("owner@acme.test");
  // The environment's name shows once the page has the project's environments (the record holds its id).
  await page
    .getByTestId("run-environment")
    .filter({ hasText: /^staging$/ })
    .waitFor();
});

test("Run again on a run's page offers the environment picker, defaulting to that run's environment", async () => {
  expect((await s.call("POST", "/projects", { name: "Again", slug: "again" })).status).toBe(201);
  const staging = await json<{ id: string }>(
    await s.call("POST", "/projects/again/environments", { name: "staging", variables: { BASE_URL: target.url } }),
    201,
  );
  const other = await json<{ id: string }>(await s.call("POST", "/projects/again/environments", { name: "other", variables: { BASE_URL: target.url } }), 201);
  const automation = await json<{ id: string }>(
    await s.call("POST", "/projects/again/automations", { name: "up", kind: "http", steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }] }),
    201,
  );
  const first = await json<{ id: string }>(await s.call("POST", `/projects/again/automations/${automation.id}/run`, { environment: staging.id }), 202);
  const { page } = await newPage(browser);
  page.setDefaultTimeout(20_000);
  watch(page);
  await signInAsOwner(page, s.url);
  const runAgain = async (from: string) => {
    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((u) => u.hash.includes("/runs/run_") && !u.hash.endsWith(from));
    const id = page.url().split("/runs/")[1] ?? "";
    return json<{ environment_id: string | null; automation_id: string }>(await s.call("GET", `/projects/again/runs/${id}`)).then((r) => ({ id, ...r }));
  };
  await page.goto(`${s.url}/#/p/again/runs/${first.id}`);
  await page.getByTestId("run-status").getByText("passed").waitFor({ timeout: 30_000 });
  // By default the run's own environment, said by name; the run goes there.
  const picker = page.getByLabel("Environment");
  await picker.getByText("as this run (staging)").waitFor({ state: "attached" });
  expect(await picker.inputValue()).toBe("");
  const second = await runAgain(first.id);
  expect(second.automation_id).toBe(automation.id);
  expect(second.environment_id).toBe(staging.id);
  // Another environment chosen beside the button is the one the next run uses.
  await page.getByTestId("run-status").getByText("passed").waitFor({ timeout: 30_000 });
  await page.getByLabel("Environment").selectOption({ label: "other" });
  const third = await runAgain(second.id);
  expect(third.environment_id).toBe(other.id);
});
