// Long-polls: `?wait=N` on get_run, get_group_run and get_generation answers as soon as the record has ended (at
// once when it already has), else after N s with its current state. Waiting holds no database connection, ends
// when the client goes away or the server stops, counts as one request, and is bounded per workspace.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_WAITERS_PER_WORKSPACE } from "../src/core/waits";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";

let target: TargetApp;
beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
});

type Rec = { id: string; status: string };

const held = (key: string) => ({
  name: `held-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps: [{ request: { url: `/hold/${key}?ms=0`, timeout_ms: 60_000 }, expect: [{ status: 200 }] }],
});

async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await Bun.sleep(10);
  }
}

/** Whether a promise has settled yet (looked at after the current turn). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  const pending = Symbol("pending");
  return (await Promise.race([p.then(() => true), Bun.sleep(0).then(() => pending)])) !== pending;
}

describe("long-polls on one server", () => {
  let s: TestServer;
  let project: string;
  beforeAll(async () => {
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 1 } });
    ({ project } = await projectWithEnv(s, "long poll", { BASE_URL: target.url }));
  });
  afterAll(async () => {
    await s.stop();
  });

  test("get_run ?wait=30 answers when the run ends, not before", async () => {
    const key = crypto.randomUUID();
    const runId = await startRun(s, project, await createAutomation(s, project, held(key)));
    try {
      await until("the run's request held", () => target.held(key).length === 1);
      const answer = s.call("GET", `/projects/${project}/runs/${runId}?wait=30`).then((r) => json<Rec>(r));
      await until("the read waiting", () => s.server.core.waits.size === 1);
      expect(await settled(answer)).toBe(false);
      target.release(key);
      expect((await answer).status).toBe("passed");
    } finally {
      target.release(key);
    }
  }, 30_000);

  test("a finished run answers at once; ?wait=1 on a running run answers after 1 s with its current state", async () => {
    const done = await startRun(s, project, await createAutomation(s, project, { ...held("open"), steps: [{ request: { url: "/items/1" } }] }));
    target.release("open");
    await waitForRun(s, project, done);
    const t0 = performance.now();
    expect((await json<Rec>(await s.call("GET", `/projects/${project}/runs/${done}?wait=30`))).status).toBe("passed");
    expect(performance.now() - t0).toBeLessThan(10_000);

    const key = crypto.randomUUID();
    const runId = await startRun(s, project, await createAutomation(s, project, held(key)));
    try {
      await until("the run's request held", () => target.held(key).length === 1);
      const t1 = performance.now();
      expect((await json<Rec>(await s.call("GET", `/projects/${project}/runs/${runId}?wait=1`))).status).toBe("running");
      expect(performance.now() - t1).toBeGreaterThanOrEqual(900);
    } finally {
      target.release(key);
    }
    await waitForRun(s, project, runId);
  }, 30_000);

  test.each([["31"], ["-1"], ["abc"], ["1.5"], ["1e1"], ["0x5"], [""]])("?wait=%s is a 400 naming query.wait, on all three reads", async (wait) => {
    for (const path of [
      `/projects/${project}/runs/run_x?wait=${wait}`,
      `/projects/${project}/group-runs/grn_x?wait=${wait}`,
      `/projects/${project}/features/fea_x/generation?wait=${wait}`,
    ]) {
      const res = await s.call("GET", path);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; details: { path: string }[] };
      expect(body.error).toBe("invalid_request");
      expect(body.details.map((d) => d.path)).toEqual(["query.wait"]);
    }
  });

  test("get_group_run ?wait=30 answers when its last run ends", async () => {
    const key = crypto.randomUUID();
    const a = await createAutomation(s, project, held(key));
    const b = await createAutomation(s, project, { ...held(key), name: `second-${key.slice(0, 6)}` });
    const group = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/groups`, { name: `g-${key.slice(0, 6)}`, automation_ids: [a, b] }),
      201,
    );
    const gr = await json<Rec>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
    try {
      await until("the first run's request held", () => target.held(key).length === 1);
      const answer = s.call("GET", `/projects/${project}/group-runs/${gr.id}?wait=30`).then((r) => json<Rec & { summary: { passed: number } }>(r));
      await until("the read waiting", () => s.server.core.waits.size === 1);
      target.release(key);
      const final = await answer;
      expect(final.status).toBe("passed");
      expect(final.summary.passed).toBe(2);
    } finally {
      target.release(key);
    }
  }, 30_000);

  test("get_generation ?wait=30 answers when the generation ends", async () => {
    const key = crypto.randomUUID();
    const feature = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/features`, { name: `crawl ${key.slice(0, 6)}`, target: { kind: "web", url: `${target.url}/hold/${key}` } }),
      201,
    );
    const path = `/projects/${project}/features/${feature.id}/generation`;
    try {
      await json(await s.call("POST", path, { strategy: "crawl" }), 202);
      await until("the crawl's request held", () => target.held(key).length === 1);
      const answer = s.call("GET", `${path}?wait=30`).then((r) => json<Rec>(r));
      await until("the read waiting", () => s.server.core.waits.size === 1);
      expect(await settled(answer)).toBe(false);
      target.release(key);
      expect(["succeeded", "failed"]).toContain((await answer).status);
    } finally {
      target.release(key);
    }
  }, 30_000);

  test("a change committed by another process ends the wait (the fallback check), and a client that goes away stops waiting", async () => {
    const key = crypto.randomUUID();
    const id = await createAutomation(s, project, held(key));
    const first = await startRun(s, project, id);
    const second = await startRun(s, project, id);
    try {
      // One slot, held by the first run: the second stays queued.
      await until("the first run's request held", () => target.held(key).length === 1);
      const gone = new AbortController();
      const abandoned = fetch(`${s.api}/projects/${project}/runs/${first}?wait=30`, {
        headers: { authorization: `Bearer ${s.key}` },
        signal: gone.signal,
      }).catch(() => "aborted");
      const answer = s.call("GET", `/projects/${project}/runs/${second}?wait=30`).then((r) => json<Rec>(r));
      await until("both reads waiting", () => s.server.core.waits.size === 2);
      gone.abort();
      expect(await abandoned).toBe("aborted");
      await until("the abandoned read no longer waiting", () => s.server.core.waits.size === 1);

      // Another connection (another node, on PostgreSQL) cancels it.
      await s.sql("UPDATE runs SET status = 'cancelled', error = 'cancelled elsewhere' WHERE id = ? AND status = 'queued'", second);
      expect((await answer).status).toBe("cancelled");
    } finally {
      target.release(key);
    }
    await waitForRun(s, project, first);
  }, 30_000);

  test(`past ${MAX_WAITERS_PER_WORKSPACE} waiting reads of one workspace, another read answers at once`, async () => {
    const key = crypto.randomUUID();
    const runId = await startRun(s, project, await createAutomation(s, project, held(key)));
    const waiting: Promise<Rec>[] = [];
    try {
      await until("the run's request held", () => target.held(key).length === 1);
      for (let i = 0; i < MAX_WAITERS_PER_WORKSPACE; i++) {
        waiting.push(
          fetch(`${s.api}/projects/${project}/runs/${runId}?wait=30`, { headers: { authorization: `Bearer ${s.key}` } }).then((r) => r.json() as Promise<Rec>),
        );
      }
      await until("all waiting", () => s.server.core.waits.size === MAX_WAITERS_PER_WORKSPACE);
      expect((await json<Rec>(await s.call("GET", `/projects/${project}/runs/${runId}?wait=30`))).status).toBe("running");
      expect(s.server.core.waits.size).toBe(MAX_WAITERS_PER_WORKSPACE);
    } finally {
      target.release(key);
    }
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual(Array(MAX_WAITERS_PER_WORKSPACE).fill("passed"));
  }, 30_000);
});

describe("a long-poll and the rest of the server", () => {
  test("a waiting read counts once against the workspace's budget, and the server's stop answers it at once", async () => {
    const s = await startTestServer({ rate_limit: { per_workspace_per_hour: 50 }, runner: { concurrency: 1, shutdown_grace_ms: 0 } });
    const key = crypto.randomUUID();
    try {
      const { project } = await projectWithEnv(s, "budget", { BASE_URL: target.url });
      const runId = await startRun(s, project, await createAutomation(s, project, held(key)));
      await until("the run's request held", () => target.held(key).length === 1);
      const before = Number((await s.call("GET", `/projects/${project}/runs/${runId}`)).headers.get("ratelimit-remaining"));
      const answer = s.call("GET", `/projects/${project}/runs/${runId}?wait=30`);
      await until("the read waiting", () => s.server.core.waits.size === 1);
      const stopped = s.stop();
      const res = await answer;
      expect(res.status).toBe(200);
      expect(((await res.json()) as Rec).status).toBe("running");
      // One token taken (a refill in between may give it back), however long it waited.
      const spent = before - Number(res.headers.get("ratelimit-remaining"));
      expect(spent).toBeGreaterThanOrEqual(0);
      expect(spent).toBeLessThanOrEqual(1);
      await stopped;
    } finally {
      target.release(key);
    }
  }, 30_000);
});
