// Runs execute in worker processes apart from the API: the workers are the server's children, do the run's work
// on their own CPU, carry none of the server's settings, cannot open the database where the OS can enforce it,
// are killed and replaced when a run does not stop after its timeout or a cancel, are replaced when they crash,
// and die with the server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { createAutomation, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil } from "./helpers/wait";

const ROOT = resolve(import.meta.dir, "..");

/** A JSON document whose JSON Schema check (a pattern on every item, run by the linear-time engine) takes seconds
 * of CPU without yielding: a step that cannot notice a timeout or a cancel. */
const HEAVY_ITEMS = 400_000;
const heavyBody = JSON.stringify({ items: Array.from({ length: HEAVY_ITEMS }, (_, i) => ({ id: i, name: `item number ${i}` })) });
const uniqueBody = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `item number ${i}` })));
const heavyCheck = {
  schema: {
    type: "object",
    properties: { items: { type: "array", items: { type: "object", properties: { name: { type: "string", pattern: "^item (number )?[0-9]+$" } } } } },
  },
};
let heavy: ReturnType<typeof Bun.serve>;
let heavyRequests = 0;

function stat(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    return s.slice(s.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

const alive = (pid: number) => {
  const s = stat(pid);
  return s !== null && s[0] !== "Z";
};

/** The run worker processes below `pid`, found through /proc. */
function workerPids(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    if (Number(stat(Number(name))?.[1]) !== pid) continue;
    let cmd = "";
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, "utf8");
    } catch {}
    if (cmd.includes("worker-main") || cmd.includes("__run-worker")) out.push(Number(name));
  }
  return out;
}

const cpuTicks = (pid: number) => {
  const s = stat(pid);
  return s ? Number(s[11]) + Number(s[12]) : 0;
};

let target: TargetApp;
beforeAll(() => {
  target = startTargetApp();
  heavy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req) => {
      heavyRequests++;
      const body = new URL(req.url).pathname === "/unique.json" ? uniqueBody : heavyBody;
      return new Response(body, { headers: { "content-type": "application/json" } });
    },
  });
});
afterAll(async () => {
  heavy.stop(true);
  await target.stop();
});

const http = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `w-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps,
  ...extra,
});
/**
 * A step whose check never yields: uniqueItems compares every pair of 20,000 objects, far longer than any timeout
 * here, while the body is small enough to arrive at once. Only killing its worker stops it.
 */
const stuckStep = () => ({ request: { url: `http://127.0.0.1:${heavy.port}/unique.json` }, expect: [{ schema: { type: "array", uniqueItems: true } }] });
const heavyStep = () => ({ request: { url: `http://127.0.0.1:${heavy.port}/items.json` }, expect: Array(8).fill(heavyCheck) });

describe("one worker process, two slots", () => {
  let s: TestServer;
  let project: string;
  /** Workers of servers that other test files in this process left running are not this server's. */
  let others = new Set<number>();
  const ours = () => workerPids(process.pid).filter((p) => !others.has(p));
  beforeAll(async () => {
    others = new Set(workerPids(process.pid));
    process.env.SVC_WORKER_TEST_SETTING = "must-not-reach-workers";
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 2, workers: 1 } });
    ({ project } = await projectWithEnv(s, "workers", { BASE_URL: target.url }));
    await waitUntil(() => ours().length === 1, 10_000);
  }, 30_000);
  afterAll(async () => {
    delete process.env.SVC_WORKER_TEST_SETTING;
    await s.stop();
  });

  test("a CPU-heavy run executes in the worker process, a child of the server, while the server's thread stays free", async () => {
    const [worker] = ours() as [number];
    expect(worker).toBeNumber();
    const id = await createAutomation(s, project, http([heavyStep()], { timeout_ms: 120_000 }));
    const workerBefore = cpuTicks(worker);
    const serverBefore = process.cpuUsage();
    // The server's thread keeps answering: the longest pause between timer ticks while the run executes.
    let last = performance.now();
    let longestPause = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestPause = Math.max(longestPause, now - last);
      last = now;
    }, 10);
    const run = await waitForRun(s, project, await startRun(s, project, id), 120_000);
    clearInterval(ticker);
    expect(run.status).toBe("passed");
    const workerMs = (cpuTicks(worker) - workerBefore) * 10;
    const server = process.cpuUsage(serverBefore);
    const serverMs = (server.user + server.system) / 1000;
    // The schema check alone is seconds of CPU, all of it spent in the worker.
    expect(workerMs).toBeGreaterThan(1000);
    expect(workerMs).toBeGreaterThan(serverMs);
    // On the server's thread the check would hold it for its whole seconds at once; a loaded 2-core machine still
    // pauses the thread now and then for a few hundred ms (543 ms seen while other suites ran beside it).
    expect(longestPause).toBeLessThan(1_000);
  }, 180_000);

  test("the worker carries none of the server's settings and, where the OS can enforce it, cannot open the database", async () => {
    const [worker] = ours() as [number];
    const environ = readFileSync(`/proc/${worker}/environ`, "utf8").split("\0").filter(Boolean);
    expect(environ.some((e) => e.startsWith("SVC_"))).toBe(false);
    expect(environ.length).toBeLessThan(12);
    const ready = (await (await fetch(`${s.url}/readyz`)).json()) as { checks: { workers: Record<string, unknown> } };
    const uid = Number(/Uid:\s+(\d+)/.exec(readFileSync(`/proc/${worker}/status`, "utf8"))?.[1]);
    if (process.getuid?.() === 0) {
      // As root the workers run as nobody, and the data directory is the server's alone.
      expect(uid).toBe(65534);
      expect(ready.checks.workers).toMatchObject({ ok: true, isolation: "uid", workers: 1, database_readable: false });
    } else {
      expect(uid).toBe(process.getuid?.() ?? uid);
      expect(ready.checks.workers).toMatchObject({ ok: true, isolation: "construction", workers: 1 });
    }
    // The Chromium the worker found, as the worker itself (its user, its PATH) sees it: Debian's headless shell here.
    expect(ready.checks.workers.browser).toBe("/usr/lib/chromium/chromium-headless-shell");
  });

  test("the worker and every thread of it run under SCHED_BATCH: woken by its work, it never preempts the API's thread", async () => {
    const [worker] = ours() as [number];
    // The scheduling policy is field 41 of /proc/PID/task/TID/stat: 0 SCHED_OTHER, 3 SCHED_BATCH.
    const policies = readdirSync(`/proc/${worker}/task`).map((tid) =>
      Number(readFileSync(`/proc/${worker}/task/${tid}/stat`, "utf8").split(") ")[1]?.split(" ")[38]),
    );
    expect(policies.length).toBeGreaterThan(1);
    expect(new Set(policies)).toEqual(new Set([3]));
    // The server's own thread (this process: the test server runs in it) keeps the normal policy.
    expect(Number(readFileSync(`/proc/${process.pid}/stat`, "utf8").split(") ")[1]?.split(" ")[38])).toBe(0);
    const ready = (await (await fetch(`${s.url}/readyz`)).json()) as { checks: { workers: Record<string, unknown> } };
    expect(ready.checks.workers.scheduling).toBe("batch");
  });

  test("a run busy past its timeout: its worker is killed and replaced, it ends timed_out, the run beside it ends error, the next run passes", async () => {
    const [worker] = ours() as [number];
    const busyId = await createAutomation(s, project, http([stuckStep()], { timeout_ms: 1000 }));
    const besideId = await createAutomation(s, project, http([{ request: { url: "/slow?ms=8000" } }]));
    const started = Date.now();
    const beside = await startRun(s, project, besideId);
    const busy = await startRun(s, project, busyId);
    const busyRun = await waitForRun(s, project, busy, 10_000);
    expect(busyRun.status).toBe("timed_out");
    expect(Date.now() - started).toBeLessThan(2500);
    expect(busyRun.error).toContain("did not finish within its timeout of 1000 ms");
    const besideRun = await waitForRun(s, project, beside, 10_000);
    expect(besideRun.status).toBe("error");
    expect(besideRun.error).toContain("the worker process executing the run was stopped because a run on the same worker process was timed out");
    expect(await waitUntil(() => !alive(worker), 5_000)).toBe(true);
    expect(await waitUntil(() => ours().some((p) => p !== worker), 10_000)).toBe(true);
    const next = await waitForRun(s, project, await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/items/1" } }]))));
    expect(next.status).toBe("passed");
  }, 30_000);

  test("cancel_run of a run busy in its worker: cancelled within a second", async () => {
    const id = await createAutomation(s, project, http([heavyStep(), heavyStep(), heavyStep()], { timeout_ms: 120_000 }));
    heavyRequests = 0;
    const runId = await startRun(s, project, id);
    // Cancelled while its worker is busy in the schema check (the request has been answered).
    expect(await waitUntil(() => heavyRequests > 0, 10_000)).toBe(true);
    const at = Date.now();
    const res = await s.call("POST", `/projects/${project}/runs/${runId}/cancel`);
    expect(res.status).toBe(200);
    const run = await waitForRun(s, project, runId, 5_000);
    expect(run.status).toBe("cancelled");
    expect(Date.now() - at).toBeLessThan(1000);
  }, 30_000);

  test("a worker killed from outside (kill -9): its run ends error saying so, a new worker takes its place, the next run passes", async () => {
    // A worker killed by the test before is gone, and its successor is up; the run cancelled before has stopped
    // (or its worker was replaced), so the run below cannot land on a worker about to be killed for it.
    const readyOne = async () => {
      const r = (await (await fetch(`${s.url}/readyz`)).json()) as { checks: { workers: { workers: number; ready: number; running: number } } };
      return r.checks.workers.workers === 1 && r.checks.workers.ready === 1 && r.checks.workers.running === 0;
    };
    const deadline = Date.now() + 10_000;
    while (!((await readyOne()) && ours().length === 1) && Date.now() < deadline) await Bun.sleep(20);
    expect(ours().length).toBe(1);
    const [worker] = ours() as [number];
    const id = await createAutomation(s, project, http([{ request: { url: "/slow?ms=8001" } }]));
    const runId = await startRun(s, project, id);
    expect(await waitUntil(() => target.seen.some((r) => r.path === "/slow?ms=8001"), 5_000)).toBe(true);
    process.kill(worker, "SIGKILL");
    const run = await waitForRun(s, project, runId, 5_000);
    expect(run.status).toBe("error");
    expect(run.error).toContain("the worker process executing the run stopped unexpectedly (killed by SIGKILL): run it again");
    expect(await waitUntil(() => ours().some((p) => p !== worker), 10_000)).toBe(true);
    const next = await waitForRun(s, project, await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/items/2" } }]))));
    expect(next.status).toBe("passed");
    const ready = (await (await fetch(`${s.url}/readyz`)).json()) as { checks: { workers: { ok: boolean; replaced: number } } };
    expect(ready.checks.workers.ok).toBe(true);
    expect(ready.checks.workers.replaced).toBeGreaterThanOrEqual(1);
  }, 30_000);
});

test("cancel_run of a browser run: cancelled within a second", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 1, workers: 1 } });
  try {
    const { project } = await projectWithEnv(s, "browser cancel", { BASE_URL: target.url });
    const id = await createAutomation(s, project, {
      name: "waits",
      kind: "browser",
      environment: "test",
      steps: [{ goto: "/dashboard?user=x" }, { expect: { text: "never shown" }, timeout_ms: 60_000 }],
      timeout_ms: 120_000,
    });
    const runId = await startRun(s, project, id);
    // Cancelled once the browser is on the page and waiting for the text.
    expect(await waitUntil(() => target.seen.some((r) => r.path === "/dashboard?user=x"), 60_000)).toBe(true);
    const at = Date.now();
    expect((await s.call("POST", `/projects/${project}/runs/${runId}/cancel`)).status).toBe(200);
    const run = await waitForRun(s, project, runId, 5_000);
    expect(run.status).toBe("cancelled");
    expect(Date.now() - at).toBeLessThan(1000);
  } finally {
    await s.stop();
  }
}, 90_000);

test("no orphans: the server killed with SIGKILL takes its workers with it", async () => {
  const dataDir = tempDir();
  const proc = Bun.spawn(["bun", join(ROOT, "src/main.ts"), "serve", "--port", "0", "--data-dir", dataDir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", SVC_RUNNER_WORKERS: "2", SVC_LOG_LEVEL: "warn" },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    expect(await waitUntil(() => workerPids(proc.pid).length === 2, 20_000)).toBe(true);
    const workers = workerPids(proc.pid);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(await waitUntil(() => workers.every((p) => !alive(p)), 5_000)).toBe(true);
  } finally {
    proc.kill("SIGKILL");
  }
}, 60_000);
