// A run handed to a worker process that is still starting (a loaded machine, a server just started, a worker just
// replaced) gets its whole timeout once the worker is ready: the start-up is not the run's. A worker that never
// gets ready is killed after the start limit, its runs end `error`, and a new worker takes its place. The worker is
// held in its start-up by stopping its process group (SIGSTOP) right after the pool spawns it.
import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { ExecuteOptions } from "../src/runner/executor";
import { WorkerPoolExecutor } from "../src/runner/worker-pool";

setDefaultTimeout(30_000);

let target: ReturnType<typeof Bun.serve>;
let pool: WorkerPoolExecutor | null = null;

beforeAll(() => {
  target = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ ok: true }) });
});
afterAll(() => target.stop(true));
afterEach(async () => {
  await pool?.close();
  pool = null;
});

function job(timeoutMs: number) {
  const spec = {
    kind: "http" as const,
    steps: [{ request: { method: "GET" as const, url: "/ok" }, expect: [{ status: 200 }] }],
    timeout_ms: timeoutMs,
    retries: 0,
  };
  return {
    id: crypto.randomUUID(),
    automationId: "automation",
    spec,
    specText: JSON.stringify(spec),
    environmentId: "environment",
    environment: { name: "local", variables: { BASE_URL: `http://127.0.0.1:${target.port}` }, secrets: {}, unreadableSecrets: [], secretHosts: null },
  };
}

function options(): ExecuteOptions {
  return {
    signal: new AbortController().signal,
    settings: { defaultTimeoutMs: 30_000, excerptBytes: 1024, maxResponseBytes: 1_000_000 },
    saveArtifact: async () => {},
  } as ExecuteOptions;
}

/** Stops the worker's whole process group (the pool starts each worker in its own): it cannot get ready until continued. */
function hold(p: WorkerPoolExecutor, signal: "SIGSTOP" | "SIGCONT"): void {
  const [pid] = p.pids();
  if (pid === undefined) throw new Error("the pool has no worker");
  process.kill(-pid, signal);
}

test("a run handed to a worker that is still starting gets its whole timeout once the worker is ready", async () => {
  pool = new WorkerPoolExecutor({ workers: 1 });
  hold(pool, "SIGSTOP");
  const outcome = pool.execute(job(500), options());
  // Longer than the run's timeout and the kill grace together: a clock started at hand-over would have ended it.
  await Bun.sleep(1_500);
  expect(pool.health().ready).toBe(0);
  hold(pool, "SIGCONT");
  const result = await outcome;
  expect({ status: result.status, error: result.error }).toEqual({ status: "passed", error: null });
  expect(pool.health().replaced).toBe(0);
});

test("a worker that never gets ready is killed after the start limit: its runs end error and a new worker runs the next", async () => {
  // The limit holds for the replacement too: long enough for a worker to start on a loaded machine.
  pool = new WorkerPoolExecutor({ workers: 1, startLimitMs: 5_000 });
  const [first] = pool.pids();
  hold(pool, "SIGSTOP");
  const t0 = performance.now();
  const result = await pool.execute(job(30_000), options());
  const waited = performance.now() - t0;
  expect(result.status).toBe("error");
  expect(result.error).toContain("did not start within 5000 ms");
  expect(waited).toBeGreaterThanOrEqual(4_900);
  expect(waited).toBeLessThan(10_000);
  expect(pool.health()).toMatchObject({ replaced: 1 });
  expect(pool.pids()).not.toContain(first);
  const next = await pool.execute(job(30_000), options());
  expect({ status: next.status, error: next.error }).toEqual({ status: "passed", error: null });
});
