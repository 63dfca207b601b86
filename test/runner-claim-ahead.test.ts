// Runs claimed ahead: while runs are short, the engine claims runs beyond its free slots (about 10 ms of the slots'
// work, at least one per slot) and starts them as slots free. Never more than runner.concurrency execute at once;
// a run queued meanwhile (here another workspace's) sends them back to the queue so the turns hold; a stop sends
// them back too; each run executes exactly once, and its time starts when it does, not when it was claimed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { aheadOf } from "../src/runner/engine";
import { json, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

let target: TargetApp;
beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
});

/** A project of the key's workspace whose environment points at the target. */
async function projectIn(s: TestServer, key: string, name: string): Promise<string> {
  const project = await json<{ slug: string }>(await s.call("POST", "/projects", { name }, key), 201);
  await json(await s.call("POST", `/projects/${project.slug}/environments`, { name: "test", variables: { BASE_URL: target.url } }, key), 201);
  return project.slug;
}

async function automation(s: TestServer, key: string, project: string, name: string, url: string): Promise<string> {
  const steps = [{ request: { url, timeout_ms: 60_000 }, expect: [{ status: 200 }] }];
  return (await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations`, { name, kind: "http", environment: "test", steps }, key), 201))
    .id;
}

/** A group run of `n` automations that each wait at /hold/{key} until the test releases them. */
async function heldGroupRun(s: TestServer, project: string, hold: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await automation(s, s.key, project, `held ${hold} ${i}`, `/hold/${hold}?ms=0`));
  const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: `held ${hold}`, automation_ids: ids }), 201);
  const gr = await json<{ runs: { id: string }[] }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
  return gr.runs.map((r) => r.id);
}

/**
 * Short runs first: the engine claims ahead only once it has seen runs end quickly (their time smoothed). Enough of
 * them that a slow first one (a worker still cold, a loaded machine) no longer counts.
 */
async function warmUp(s: TestServer, project: string): Promise<void> {
  const quick = await automation(s, s.key, project, "quick", "/items/1");
  for (let i = 0; i < 12; i++) {
    const run = await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations/${quick}/run`, {}), 202);
    expect((await waitForRun(s, project, run.id)).status).toBe("passed");
  }
}

const countOf = async (s: TestServer, runIds: string[], status: string) =>
  Number(
    (await s.sql<{ n: number }>(`SELECT COUNT(*) AS n FROM runs WHERE status = ? AND id IN (${runIds.map(() => "?").join(", ")})`, status, ...runIds))[0]?.n ??
      0,
  );

test("two slots: two runs execute and more wait ahead; another workspace's queued run sends them back; each run executes once", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 2 } });
  const hold = crypto.randomUUID();
  try {
    const project = await projectIn(s, s.key, "ahead");
    await warmUp(s, project);
    const runs = await heldGroupRun(s, project, hold, 6);
    await waitUntil(() => target.held(hold).length === 2, 20_000);
    expect(target.held(hold).length).toBe(2);
    // Claimed: the two executing and at least two ahead. Only the slots' two reached the target.
    await waitUntilAsync(async () => (await countOf(s, runs, "running")) >= 4, 20_000);
    expect(await countOf(s, runs, "running")).toBeGreaterThanOrEqual(4);
    await Bun.sleep(200);
    expect(target.held(hold).length).toBe(2);

    // Another workspace queues a run: the runs waiting ahead go back, so it takes the next slot in its turn.
    const b = await s.userWithKey("owner@beta.test", "beta");
    const other = await projectIn(s, b.key, "other");
    const quick = await automation(s, b.key, other, "quick", "/items/2");
    const bRun = (await json<{ id: string }>(await s.call("POST", `/projects/${other}/automations/${quick}/run`, {}, b.key), 202)).id;
    await waitUntilAsync(async () => (await countOf(s, runs, "running")) === 2, 20_000);
    expect(await countOf(s, runs, "running")).toBe(2);
    expect(await countOf(s, runs, "queued")).toBe(4);

    target.release(hold);
    const ended = await Promise.all(runs.map((id) => waitForRun(s, project, id, 20_000)));
    expect(ended.map((r) => r.status)).toEqual(Array(6).fill("passed"));
    let bStatus = "queued";
    await waitUntilAsync(async () => {
      bStatus = (await json<{ status: string }>(await s.call("GET", `/projects/${other}/runs/${bRun}`, undefined, b.key))).status;
      return !["queued", "running"].includes(bStatus);
    }, 20_000);
    expect(bStatus).toBe("passed");
    // Each of the six executed exactly once, and never more than two at once.
    expect(target.held(hold).length).toBe(6);
  } finally {
    target.release(hold);
    await s.stop();
  }
}, 60_000);

test("a stop sends the runs waiting ahead back to the queue: only the runs executing end as interrupted", async () => {
  const dataDir = tempDir("svc-ahead-stop-");
  const hold = crypto.randomUUID();
  try {
    const s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false }, runner: { concurrency: 2, shutdown_grace_ms: 0 } });
    let runs: string[] = [];
    try {
      const project = await projectIn(s, s.key, "ahead");
      await warmUp(s, project);
      runs = await heldGroupRun(s, project, hold, 6);
      await waitUntil(() => target.held(hold).length === 2, 20_000);
      expect(target.held(hold).length).toBe(2);
      await waitUntilAsync(async () => (await countOf(s, runs, "running")) >= 4, 20_000);
      expect(await countOf(s, runs, "running")).toBeGreaterThanOrEqual(4);
    } finally {
      await s.stop();
    }
    // Read with the engine off: nothing claims them again.
    const after = await startTestServer({ data_dir: dataDir, runner: { local: false } });
    try {
      expect(await countOf(after, runs, "error")).toBe(2);
      expect(await countOf(after, runs, "queued")).toBe(4);
      expect(await countOf(after, runs, "running")).toBe(0);
    } finally {
      await after.stop();
    }
  } finally {
    target.release(hold);
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 60_000);

test("runs claimed ahead: about 10 ms of the slots' work, at least one per slot, at most 64 (or a slot count); none once runs are long", () => {
  expect(aheadOf(4, 1)).toBe(40);
  expect(aheadOf(4, 0.01)).toBe(64);
  expect(aheadOf(2, 20)).toBe(2);
  expect(aheadOf(256, 1)).toBe(256);
  expect(aheadOf(4, 49)).toBe(4);
  expect(aheadOf(4, 50)).toBe(0);
  expect(aheadOf(4, Number.POSITIVE_INFINITY)).toBe(0);
});

test("a run that waited ahead for its slot is timed from when it started: started_at and duration_ms leave out the wait", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 2 } });
  const hold = crypto.randomUUID();
  try {
    const project = await projectIn(s, s.key, "ahead");
    await warmUp(s, project);
    const runs = await heldGroupRun(s, project, hold, 4);
    await waitUntil(() => target.held(hold).length === 2, 20_000);
    await waitUntilAsync(async () => (await countOf(s, runs, "running")) === 4, 20_000);
    // The two executing are held for 600 ms; the two ahead start after them.
    await Bun.sleep(600);
    const released = Date.now();
    target.release(hold);
    const ended = await Promise.all(runs.map((id) => waitForRun(s, project, id, 20_000)));
    expect(ended.map((r) => r.status)).toEqual(Array(4).fill("passed"));
    const rows = await s.sql<{ id: string; started_at: string; finished_at: string; duration_ms: number }>(
      `SELECT id, started_at, finished_at, duration_ms FROM runs WHERE id IN (${runs.map(() => "?").join(", ")})`,
      ...runs,
    );
    for (const r of rows) expect(r.duration_ms).toBe(Date.parse(r.finished_at) - Date.parse(r.started_at));
    const [long, short] = [rows.filter((r) => r.duration_ms >= 600), rows.filter((r) => r.duration_ms < 600)];
    // The held two took their 600 ms; the two that waited ahead started once released, and took a few ms.
    expect(long.length).toBe(2);
    expect(short.length).toBe(2);
    for (const r of short) expect(Date.parse(r.started_at)).toBeGreaterThanOrEqual(released - 5);
  } finally {
    target.release(hold);
    await s.stop();
  }
}, 60_000);
