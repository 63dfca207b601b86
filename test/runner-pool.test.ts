// The bounded pool: never more than runner.concurrency runs in flight, and that many really run at once — for
// runs queued one by one and for a group run. Overlap is read from when the target saw each request start and
// end, not from how long anything took.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestServer } from "./helpers/server";
import { maxOverlap, startTargetApp, type TargetApp } from "./helpers/target-app";
import { createAutomation, json, runnerServer, startRun, waitForRun } from "./helpers/runs";

let target: TargetApp;

beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
});

const holding = (key: string) => ({
  name: `hold-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps: [{ request: { url: `/hold/${key}?ms=300`, timeout_ms: 60_000 }, expect: [{ status: 200 }] }],
});

/** Runs `body`, and whatever happens lets the held requests go, so a failure does not hold up the server's stop. */
async function holdingRequests(key: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } finally {
    target.release(key);
  }
}

/** Waits until `n` requests to /hold/{key} have arrived (a pool smaller than n never gets there: the test fails). */
async function arrived(key: string, n: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (target.held(key).length < n) {
    if (Date.now() > deadline) throw new Error(`only ${target.held(key).length} of ${n} requests to /hold/${key} arrived at once`);
    await Bun.sleep(10);
  }
}

/** The finished intervals; every request must have ended. */
function intervals(key: string): { start: number; end: number }[] {
  return target.held(key).map((i) => {
    if (i.end === null) throw new Error(`a request to /hold/${key} never ended`);
    return { start: i.start, end: i.end };
  });
}

type Listed = { data: { id: string; status: string }[] };

describe("runner.concurrency = 3", () => {
  let s: TestServer;
  let project: string;
  beforeAll(async () => {
    ({ s, project } = await runnerServer("pool of three", target.url, 3));
  });
  afterAll(async () => {
    await s.stop();
  });

  test("9 queued runs: 3 run at once, the other 6 wait queued, and never more than 3 are in flight", async () => {
    const key = crypto.randomUUID();
    const id = await createAutomation(s, project, holding(key));
    const runIds = await Promise.all(Array.from({ length: 9 }, () => startRun(s, project, id)));
    // The target holds every request until released: the first three runs are stuck in flight...
    await holdingRequests(key, async () => {
      await arrived(key, 3);
      // ...and while they are, the pool leaves the rest queued (the listing is the database's view).
      const running = await json<Listed>(await s.call("GET", `/projects/${project}/runs?automation=${id}&status=running&limit=200`));
      const queued = await json<Listed>(await s.call("GET", `/projects/${project}/runs?automation=${id}&status=queued&limit=200`));
      expect(running.data.length).toBe(3);
      expect(queued.data.length).toBe(6);
      expect(target.held(key).length).toBe(3);
    });
    const runs = await Promise.all(runIds.map((r) => waitForRun(s, project, r, 60_000)));
    expect(runs.map((r) => r.status)).toEqual(Array(9).fill("passed"));
    const seen = intervals(key);
    expect(seen.length).toBe(9);
    // At most 3 at any instant, and 3 did overlap.
    expect(maxOverlap(seen)).toBe(3);
  }, 90_000);
});

describe("runner.concurrency = 2", () => {
  let s: TestServer;
  let project: string;
  beforeAll(async () => {
    ({ s, project } = await runnerServer("pool of two", target.url, 2));
  });
  afterAll(async () => {
    await s.stop();
  });

  test("a group run of 6 automations runs 2 at a time: they overlap, and never more than 2", async () => {
    const key = crypto.randomUUID();
    const ids = await Promise.all(Array.from({ length: 6 }, () => createAutomation(s, project, holding(key))));
    const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: `g-${key.slice(0, 6)}`, automation_ids: ids }), 201);
    const gr = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
    await holdingRequests(key, async () => {
      await arrived(key, 2);
      const inGroup = await json<Listed>(await s.call("GET", `/projects/${project}/runs?group_run=${gr.id}&limit=200`));
      expect(inGroup.data.map((r) => r.status).sort()).toEqual(["queued", "queued", "queued", "queued", "running", "running"]);
      expect(target.held(key).length).toBe(2);
    });
    let done: { status: string; runs: { status: string }[] };
    for (let i = 0; ; i++) {
      done = await json(await s.call("GET", `/projects/${project}/group-runs/${gr.id}`));
      if (!["queued", "running"].includes(done.status)) break;
      if (i > 3000) throw new Error(`group run still ${done.status}`);
      await Bun.sleep(20);
    }
    expect(done.status).toBe("passed");
    expect(done.runs.map((r) => r.status)).toEqual(Array(6).fill("passed"));
    const seen = intervals(key);
    expect(seen.length).toBe(6);
    expect(maxOverlap(seen)).toBe(2);
  }, 90_000);
});
