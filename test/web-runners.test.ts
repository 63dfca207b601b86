// Settings → Runners in headless Chromium: an owner creates a runner token (shown once, with the command that
// starts the runner), sees the runner listed with its labels, and revokes it; a run waiting for a runner that is
// not there says so on its page and its group run's; once a runner takes it, the run's page names the runner.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import { explained, launchBrowser, newPage, signInAsOwner } from "./helpers/browser";
import { startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, getRun, json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";

setDefaultTimeout(30_000);

let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  s = await startTestServer();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

test("an owner creates a runner token once, sees the runner with its labels, and revokes it", async () => {
  const { context, page } = await newPage(browser);
  try {
    await explained(page, "runners", async () => {
      await signInAsOwner(page, s.url);
      await page.getByRole("link", { name: "Runners" }).click();
      await page.getByRole("heading", { name: "Runners", level: 1 }).waitFor();
      await page.getByText("No runners yet").waitFor();
      await page.getByLabel("Runner name").fill("office-box");
      await page.getByLabel("Labels (optional)").fill("eu, office-net");
      await page.getByRole("button", { name: "Create runner token" }).click();
      const note = page.getByTestId("new-runner-token");
      await note.waitFor();
      expect(await note.textContent()).toMatch(/SVC_RUNNER_TOKEN=svcr_[0-9A-Za-z]{43} svc runner --server /);
      const row = page.locator("tr", { hasText: "office-box" });
      await row.waitFor();
      expect(await row.textContent()).toContain("eu, office-net");
      expect(await row.textContent()).toContain("never");
      // It never said hello: not connected (a runner is while heard from within a lease).
      expect(await row.textContent()).toContain("not connected");
      await row.getByRole("button", { name: "Revoke" }).click();
      await row.getByRole("button", { name: "Yes, revoke" }).click();
      await row.getByText("revoked").waitFor();
    });
  } finally {
    await context.close();
  }
  const listed = await (await s.call("GET", "/runners")).json();
  expect(listed.data[0]).toMatchObject({ name: "office-box", labels: ["eu", "office-net"] });
  expect(listed.data[0].revoked_at).not.toBeNull();
});

test("a run whose environment requires labels no connected runner has says what it waits for, on its page and its group run's", async () => {
  await json(await s.call("POST", "/projects", { name: "waits", slug: "waits" }), 201);
  await json(await s.call("POST", "/projects/waits/environments", { name: "eu", variables: { BASE_URL: "http://127.0.0.1:9" }, runner_labels: ["eu"] }), 201);
  const auto = await createAutomation(s, "waits", { name: "eu check", kind: "http", environment: "eu", steps: [{ request: { url: "/" } }] });
  const group = await json<{ id: string }>(await s.call("POST", "/projects/waits/groups", { name: "eu group", automation_ids: [auto] }), 201);
  const gr = await json<{ id: string; runs: { id: string }[] }>(await s.call("POST", `/projects/waits/groups/${group.id}/run`, {}), 202);
  const { context, page } = await newPage(browser);
  try {
    await explained(page, "waiting run", async () => {
      await signInAsOwner(page, s.url);
      await page.goto(`${s.url}/#/p/waits/group-runs/${gr.id}`);
      const groupNote = page.getByTestId("group-run-waiting");
      await groupNote.waitFor();
      expect(await groupNote.textContent()).toBe("1 run is waiting for a runner with the labels eu: none is connected");
      await page.goto(`${s.url}/#/p/waits/runs/${gr.runs[0]?.id}`);
      const runNote = page.getByTestId("run-waiting");
      await runNote.waitFor();
      expect(await runNote.textContent()).toBe("waiting for a runner with the labels eu: none is connected");
    });
  } finally {
    await context.close();
  }
});

test("once a runner with the labels connects it executes the waiting run, and the run's page names that runner", async () => {
  const token = (await json<{ token: string }>(await s.call("POST", "/runners", { name: "eu-box", labels: ["eu"] }), 201)).token;
  const runId = (await json<{ data: { id: string }[] }>(await s.call("GET", "/projects/waits/runs"))).data[0]?.id ?? "";
  // A run in the same project the server's own engine executes (an environment without labels).
  await json(await s.call("POST", "/projects/waits/environments", { name: "here", variables: { BASE_URL: "http://127.0.0.1:9" } }), 201);
  const local = await createAutomation(s, "waits", { name: "local check", kind: "http", environment: "here", steps: [{ request: { url: "/" } }] });
  const localRunId = (await json<{ id: string }>(await s.call("POST", `/projects/waits/automations/${local}/run`, {}), 202)).id;
  const runner = startRunnerProcess(s.url, token);
  try {
    // Its target refuses connections: the run ends, not passed, executed by eu-box.
    expect(await waitUntilAsync(async () => !["queued", "running"].includes((await getRun(s, "waits", runId)).status), 20_000)).toBe(true);
  } finally {
    await runner.stop("SIGTERM");
  }
  const { context, page } = await newPage(browser);
  try {
    await explained(page, "run executed by a runner", async () => {
      await signInAsOwner(page, s.url);
      await page.goto(`${s.url}/#/p/waits/runs/${runId}`);
      const fact = page.getByTestId("run-runner");
      await fact.waitFor();
      expect(await fact.textContent()).toBe("eu-box");
      expect(await page.getByTestId("run-waiting").count()).toBe(0);
      // Its name leads to the runs that runner executed: this one, and not the run the server's engine executed.
      await fact.getByRole("link", { name: "eu-box" }).click();
      const filter = page.getByTestId("runs-runner-filter");
      // Named once the runs it executed are listed (the URL holds its id).
      await filter.getByText("eu-box", { exact: true }).waitFor();
      await page.locator(`a[href*="${runId}"]`).first().waitFor();
      expect(await page.locator(`a[href*="${localRunId}"]`).count()).toBe(0);
      await filter.getByRole("button", { name: "Any runner" }).click();
      await page.locator(`a[href*="${localRunId}"]`).first().waitFor();
      // Listed with runs a runner executed, every run says where it ran.
      await page.locator(`tr[data-run-id="${localRunId}"] td[data-label="Runner"]`).getByText("server", { exact: true }).waitFor();
      expect(await page.locator(`tr[data-run-id="${runId}"] td[data-label="Runner"]`).textContent()).toBe("eu-box");
    });
  } finally {
    await context.close();
  }
});
