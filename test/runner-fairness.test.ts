// Fair dispatch: queued runs are claimed round-robin across workspaces, so one workspace's backlog keeps another's
// run waiting for one slot's turn at most; and runner.workspace_concurrency caps a workspace's runs at once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { json, waitForRun } from "./helpers/runs";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

let target: TargetApp;
beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
});

type Listed = { data: { id: string; status: string }[] };

/** A project of the key's workspace whose environment points at the target, with one automation of `steps`. */
async function automationIn(s: TestServer, key: string, name: string, steps: unknown[]): Promise<{ project: string; automation: string }> {
  const project = await json<{ slug: string }>(await s.call("POST", "/projects", { name }, key), 201);
  await json(await s.call("POST", `/projects/${project.slug}/environments`, { name: "test", variables: { BASE_URL: target.url } }, key), 201);
  const a = await json<{ id: string }>(
    await s.call("POST", `/projects/${project.slug}/automations`, { name, kind: "http", environment: "test", steps }, key),
    201,
  );
  return { project: project.slug, automation: a.id };
}

async function start(s: TestServer, key: string, at: { project: string; automation: string }): Promise<string> {
  return (await json<{ id: string }>(await s.call("POST", `/projects/${at.project}/automations/${at.automation}/run`, {}, key), 202)).id;
}

async function count(s: TestServer, key: string, project: string, status: string): Promise<number> {
  return (await json<Listed>(await s.call("GET", `/projects/${project}/runs?status=${status}&limit=200`, undefined, key))).data.length;
}

/** Every run worker process started: on a loaded machine one may take a second to start, and a run handed to it
 * then starts late, which is start-up time, not the dispatch order measured here. */
async function workersReady(s: TestServer): Promise<boolean> {
  const r = (await (await fetch(`${s.url}/readyz`)).json()) as { checks: { workers?: { workers: number; ready: number } } };
  return r.checks.workers !== undefined && r.checks.workers.workers > 0 && r.checks.workers.ready === r.checks.workers.workers;
}

describe("4 slots, 16 slow runs of workspace A queued", () => {
  let s: TestServer;
  beforeAll(async () => {
    // No grace on stop: A's slow runs are simply cut off when the test is over.
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 4, shutdown_grace_ms: 0 } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("a one-request run of workspace B takes the first slot that frees: it ends within 3.5 s of being queued", async () => {
    const b = await s.userWithKey("owner@beta.test", "beta");
    const slow = await automationIn(s, s.key, "backlog", [{ request: { url: "/slow?ms=3000", timeout_ms: 60_000 }, expect: [{ status: 200 }] }]);
    const quick = await automationIn(s, b.key, "quick", [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }]);
    expect(await waitUntilAsync(() => workersReady(s), 20_000)).toBe(true);
    for (let i = 0; i < 16; i++) await start(s, s.key, slow);
    await waitUntilAsync(async () => (await count(s, s.key, slow.project, "running")) === 4, 20_000);
    expect(await count(s, s.key, slow.project, "running")).toBe(4);
    const runId = (await json<{ id: string }>(await s.call("POST", `/projects/${quick.project}/automations/${quick.automation}/run`, {}, b.key), 202)).id;
    const run = await waitForRunOf(s, b.key, quick.project, runId);
    expect(run.status).toBe("passed");
    const waited = Date.parse(run.finished_at) - Date.parse(run.created_at);
    expect(waited).toBeLessThan(3500);
    // A's backlog is still there: B did not wait for it.
    expect(await count(s, s.key, slow.project, "queued")).toBeGreaterThanOrEqual(8);
  }, 30_000);
});

async function waitForRunOf(s: TestServer, key: string, project: string, runId: string) {
  const terminal = ["passed", "failed", "error", "timed_out", "cancelled"];
  for (;;) {
    const run = await json<{ status: string; created_at: string; finished_at: string }>(
      await s.call("GET", `/projects/${project}/runs/${runId}`, undefined, key),
    );
    if (terminal.includes(run.status)) return run;
    await Bun.sleep(20);
  }
}

describe("runner.workspace_concurrency = 2 with 4 slots", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 4, workspace_concurrency: 2 } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("a workspace runs 2 at once while the other 2 stay queued; free slots still serve another workspace", async () => {
    const key = crypto.randomUUID();
    const b = await s.userWithKey("owner@beta.test", "beta");
    const held = await automationIn(s, s.key, "held", [{ request: { url: `/hold/${key}?ms=0`, timeout_ms: 60_000 }, expect: [{ status: 200 }] }]);
    const quick = await automationIn(s, b.key, "quick", [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }]);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 4; i++) ids.push(await start(s, s.key, held));
      await waitUntil(() => target.held(key).length >= 2, 20_000);
      expect(target.held(key).length).toBeGreaterThanOrEqual(2);
      // B's run passing proves the engine claimed again while A's two were held, with slots free.
      const other = await start(s, b.key, quick);
      expect((await waitForRunOf(s, b.key, quick.project, other)).status).toBe("passed");
      expect(await count(s, s.key, held.project, "running")).toBe(2);
      expect(await count(s, s.key, held.project, "queued")).toBe(2);
      expect(target.held(key).length).toBe(2);
    } finally {
      target.release(key);
    }
    const runs = await Promise.all(ids.map((id) => waitForRun(s, held.project, id, 20_000)));
    expect(runs.map((r) => r.status)).toEqual(["passed", "passed", "passed", "passed"]);
  }, 30_000);

  test("the setting is read from SVC_RUNNER_WORKSPACE_CONCURRENCY and refuses a negative cap", async () => {
    const { loadConfig } = await import("../config/load");
    expect(loadConfig({ env: { SVC_RUNNER_WORKSPACE_CONCURRENCY: "3" }, flags: {} }).runner.workspace_concurrency).toBe(3);
    expect(loadConfig({ env: {}, flags: {} }).runner.workspace_concurrency).toBe(0);
    expect(() => loadConfig({ env: { SVC_RUNNER_WORKSPACE_CONCURRENCY: "-1" }, flags: {} })).toThrow(/workspace_concurrency/);
  });
});
