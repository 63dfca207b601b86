// cancel_group_run against a real server, run engine and target: a group run's running runs (held by the target)
// and queued ones all end cancelled at once, the engine that held them stops them (the server's own, or a remote
// runner), a sequential group run queues nothing more, a long-poll on it answers at once, and a second cancel, a
// finished group run or another workspace's are refused; the CLI command exits 0, then with the conflict's code.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { sourceCli } from "./helpers/cli-source";
import { type RunnerProcess, startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil } from "./helpers/wait";

setDefaultTimeout(60_000);

interface RunRec {
  id: string;
  status: string;
  error: string | null;
  finished_at: string | null;
}
interface GroupRunRec {
  id: string;
  status: string;
  mode: string;
  finished_at: string | null;
  summary: { total: number; queued: number; running: number; passed: number; cancelled: number };
  runs: RunRec[];
  waiting_for: string | null;
}

let target: TargetApp;
beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
});

/** An automation whose only request waits at the target until `key` is released. */
const held = (key: string) => ({
  name: `held-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps: [{ request: { url: `/hold/${key}?ms=0`, timeout_ms: 60_000 }, expect: [{ status: 200 }] }],
});

/** A group of `n` held automations, run: answers the group run as run_group does. */
async function heldGroupRun(s: TestServer, project: string, key: string, n: number, mode: "parallel" | "sequential" = "parallel"): Promise<GroupRunRec> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await createAutomation(s, project, held(key)));
  const group = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/groups`, { name: `g-${crypto.randomUUID().slice(0, 8)}`, automation_ids: ids, mode }),
    201,
  );
  return json<GroupRunRec>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
}

const readGroupRun = async (s: TestServer, project: string, id: string) => json<GroupRunRec>(await s.call("GET", `/projects/${project}/group-runs/${id}`));
const cancel = (s: TestServer, project: string, id: string, key?: string) => s.call("POST", `/projects/${project}/group-runs/${id}/cancel`, undefined, key);

describe("on the server's own engine", () => {
  let s: TestServer;
  let project: string;
  beforeAll(async () => {
    // Two at once: a group run of five has two runs running and three queued.
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 2 } });
    ({ project } = await projectWithEnv(s, "cancel group runs", { BASE_URL: target.url }));
  });
  afterAll(async () => {
    await s.stop();
  });

  test("every running and queued run ends cancelled at once, the engine frees its slots, and a long-poll answers", async () => {
    const key = crypto.randomUUID();
    const gr = await heldGroupRun(s, project, key, 5);
    try {
      expect(await waitUntil(() => target.held(key).length === 2, 20_000)).toBe(true);
      const before = await readGroupRun(s, project, gr.id);
      expect(before.status).toBe("running");
      expect(before.summary).toMatchObject({ total: 5, running: 2, queued: 3 });
      const waited = s.call("GET", `/projects/${project}/group-runs/${gr.id}?wait=30`).then((r) => json<GroupRunRec>(r));
      expect(await waitUntil(() => s.server.core.waits.size === 1, 20_000)).toBe(true);

      const t0 = performance.now();
      const res = await cancel(s, project, gr.id);
      const answered = performance.now() - t0;
      expect(res.status).toBe(200);
      const after = (await res.json()) as GroupRunRec;
      // Answered as get_group_run answers it: every run cancelled, the group run ended cancelled.
      expect(after.status).toBe("cancelled");
      expect(after.finished_at).not.toBeNull();
      expect(after.waiting_for).toBeNull();
      expect(after.summary).toMatchObject({ total: 5, queued: 0, running: 0, passed: 0, cancelled: 5 });
      expect(after.runs.map((r) => r.status)).toEqual(Array(5).fill("cancelled"));
      expect(new Set(after.runs.map((r) => r.error))).toEqual(new Set(["cancelled by request with its group run"]));
      // Within 1 s with a wide margin: it takes one transaction.
      expect(answered).toBeLessThan(1000);

      // The long-poll started before the cancel answers at once with the cancelled group run.
      const polled = await waited;
      expect(performance.now() - t0).toBeLessThan(1000);
      expect(polled.status).toBe("cancelled");

      // The engine stopped the two it held (the target never answered them): a new run takes a slot and passes.
      const quick = await createAutomation(s, project, {
        name: `quick-${key.slice(0, 6)}`,
        kind: "http",
        environment: "test",
        steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }],
      });
      expect((await waitForRun(s, project, await startRun(s, project, quick), 10_000)).status).toBe("passed");
      // Nothing the engine wrote since made a cancelled run anything else, and no held run was sent again.
      const settled = await readGroupRun(s, project, gr.id);
      expect(settled.status).toBe("cancelled");
      expect(settled.runs.map((r) => r.status)).toEqual(Array(5).fill("cancelled"));
      expect(target.held(key).length).toBe(2);
      // Its JUnit report skips them all.
      const junit = await (await s.call("GET", `/projects/${project}/group-runs/${gr.id}/junit`)).text();
      expect(junit).toContain('tests="5" failures="0" errors="0" skipped="5"');
    } finally {
      target.release(key);
    }
  });

  test("a sequential group run queues nothing more: the automations it had yet to run are recorded as not run", async () => {
    const key = crypto.randomUUID();
    const gr = await heldGroupRun(s, project, key, 3, "sequential");
    expect(gr.mode).toBe("sequential");
    try {
      expect(await waitUntil(() => target.held(key).length === 1, 20_000)).toBe(true);
      const before = await readGroupRun(s, project, gr.id);
      expect(before.summary).toMatchObject({ total: 3, running: 1, queued: 2 });
      expect(before.runs).toHaveLength(1);

      const after = await json<GroupRunRec>(await cancel(s, project, gr.id));
      expect(after.status).toBe("cancelled");
      expect(after.summary).toMatchObject({ total: 3, queued: 0, running: 0, cancelled: 3 });
      expect(after.runs.map((r) => [r.status, r.error])).toEqual([
        ["cancelled", "cancelled by request with its group run"],
        ["cancelled", "not run: the group run was cancelled"],
        ["cancelled", "not run: the group run was cancelled"],
      ]);
      // Once the held request is let go, nothing follows: no run is queued or sent after the cancel.
      target.release(key);
      await Bun.sleep(500);
      const later = await readGroupRun(s, project, gr.id);
      expect(later.runs.map((r) => r.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
      expect(later.status).toBe("cancelled");
      expect(target.held(key).length).toBe(1);
      const queued = await json<{ data: unknown[] }>(await s.call("GET", `/projects/${project}/runs?group_run=${gr.id}&status=queued`));
      expect(queued.data).toEqual([]);
    } finally {
      target.release(key);
    }
  });

  test("cancelling it again, or a group run that ended, is a 409 saying so; another workspace's is a 404", async () => {
    const key = crypto.randomUUID();
    const gr = await heldGroupRun(s, project, key, 2);
    try {
      expect((await cancel(s, project, gr.id)).status).toBe(200);
      const again = await cancel(s, project, gr.id);
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ error: "conflict", message: "the group run has already finished (cancelled)" });
    } finally {
      target.release(key);
    }

    // A group run that passed stays passed.
    const quick = await createAutomation(s, project, {
      name: `passes-${key.slice(0, 6)}`,
      kind: "http",
      environment: "test",
      steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }],
    });
    const group = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/groups`, { name: `ok-${key.slice(0, 6)}`, automation_ids: [quick] }),
      201,
    );
    const done = await json<GroupRunRec>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
    const ended = await json<GroupRunRec>(await s.call("GET", `/projects/${project}/group-runs/${done.id}?wait=30`));
    expect(ended.status).toBe("passed");
    const refused = await cancel(s, project, done.id);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: "conflict", message: "the group run has already finished (passed)" });
    expect((await readGroupRun(s, project, done.id)).status).toBe("passed");

    // Another workspace sees nothing: the same 404 as for an id that does not exist; the group run goes on.
    const key2 = crypto.randomUUID();
    const open = await heldGroupRun(s, project, key2, 1);
    try {
      const other = await s.userWithKey("owner@globex.test", "globex", "owner");
      for (const res of [await cancel(s, project, open.id, other.key), await cancel(s, project, "grn_doesnotexist")]) {
        expect(res.status).toBe(404);
        expect(((await res.json()) as { error: string }).error).toBe("not_found");
      }
      expect(["queued", "running"]).toContain((await readGroupRun(s, project, open.id)).status);
      // A member may cancel it, as a member may cancel a run.
      const member = await s.userWithKey("member@acme.test", "acme", "member");
      expect((await cancel(s, project, open.id, member.key)).status).toBe(200);
    } finally {
      target.release(key2);
    }
  });

  test("svc group-runs cancel exits 0, and a second time with the conflict's exit code", async () => {
    const key = crypto.randomUUID();
    const gr = await heldGroupRun(s, project, key, 2);
    const cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: project });
    try {
      const first = await cli.run(["group-runs", "cancel", gr.id, "--json"]);
      expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
      expect((JSON.parse(first.stdout) as GroupRunRec).status).toBe("cancelled");
      const second = await cli.run(["group-runs", "cancel", gr.id]);
      // A 409 is a usage error (exit 2), not a failed run (exit 1).
      expect(second.code).toBe(2);
      expect(second.stderr).toContain("conflict");
      expect(second.stderr).toContain("already finished (cancelled)");
    } finally {
      target.release(key);
      cli.remove();
    }
  });
});

describe("on a remote runner", () => {
  let s: TestServer;
  let project: string;
  let runner: RunnerProcess | null = null;
  beforeAll(async () => {
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
    ({ project } = await projectWithEnv(s, "cancel on runners", { BASE_URL: target.url }));
  });
  afterAll(async () => {
    await runner?.stop("SIGKILL");
    await s.stop();
  });

  test("the runner stops the runs it holds within 1 s of the cancel", async () => {
    const made = await json<{ token: string }>(await s.call("POST", "/runners", { name: "cancel-box", labels: [] }), 201);
    runner = startRunnerProcess(s.url, made.token, ["--concurrency", "2"]);
    const key = crypto.randomUUID();
    const gr = await heldGroupRun(s, project, key, 3);
    try {
      expect(await waitUntil(() => target.held(key).length === 2, 20_000)).toBe(true);
      const running = (await readGroupRun(s, project, gr.id)).runs.filter((r) => r.status === "running").map((r) => r.id);
      expect(running).toHaveLength(2);
      const t0 = Date.now();
      const after = await json<GroupRunRec>(await cancel(s, project, gr.id));
      expect(after.runs.map((r) => r.status)).toEqual(["cancelled", "cancelled", "cancelled"]);
      for (const id of running) {
        const needle = `"run_id":"${id}","status":"cancelled"`;
        expect(await runner.waitFor(needle, 5_000)).toBe(true);
        // When the runner had stopped the run, by its own log line (same clock; the pipe's delay not counted).
        const line = runner
          .output()
          .split("\n")
          .find((l) => l.includes(needle));
        expect(Date.parse((JSON.parse(String(line)) as { time: string }).time) - t0).toBeLessThan(1000);
      }
      expect((await readGroupRun(s, project, gr.id)).status).toBe("cancelled");
    } finally {
      target.release(key);
    }
  });
});
