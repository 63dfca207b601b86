// A server-wide runner takes turns between workspaces as the server's own engine does: with one slot and workspace
// A's backlog of slow runs queued first, workspace B's run is the next one it starts once A's running one ends; and
// within a workspace it takes turns across projects. The runner reports a run's end before it claims again, so the
// workspace it just served has no run running when it claims: its turns must not go to the oldest run on a tie.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type RunnerProcess, runnerCall, startRunnerProcess } from "./helpers/remote-runner";
import { json } from "./helpers/runs";
import { databaseEnv, startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntilAsync } from "./helpers/wait";

let s: TestServer;
let target: TargetApp;
let runner: RunnerProcess | null = null;

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
}, 60_000);
afterAll(async () => {
  await runner?.stop("SIGKILL");
  await s.stop();
  await target.stop();
});

/** A project of the key's workspace whose environment points at the target, with one automation of `steps`. */
async function automationIn(key: string, name: string, steps: unknown[]): Promise<{ project: string; automation: string }> {
  const project = await json<{ slug: string }>(await s.call("POST", "/projects", { name }, key), 201);
  await json(await s.call("POST", `/projects/${project.slug}/environments`, { name: "test", variables: { BASE_URL: target.url } }, key), 201);
  const a = await json<{ id: string }>(
    await s.call("POST", `/projects/${project.slug}/automations`, { name, kind: "http", environment: "test", steps }, key),
    201,
  );
  return { project: project.slug, automation: a.id };
}

async function start(key: string, at: { project: string; automation: string }): Promise<string> {
  return (await json<{ id: string }>(await s.call("POST", `/projects/${at.project}/automations/${at.automation}/run`, {}, key), 202)).id;
}

type Run = { status: string; created_at: string; started_at: string | null; finished_at: string | null };

async function runOf(key: string, project: string, runId: string): Promise<Run> {
  return json<Run>(await s.call("GET", `/projects/${project}/runs/${runId}`, undefined, key));
}

async function finished(key: string, project: string, runId: string, ms = 30_000): Promise<Run> {
  const terminal = ["passed", "failed", "error", "timed_out", "cancelled"];
  let run = await runOf(key, project, runId);
  const deadline = Date.now() + ms;
  while (!terminal.includes(run.status) && Date.now() < deadline) {
    await Bun.sleep(20);
    run = await runOf(key, project, runId);
  }
  return run;
}

/** A server-wide runner token, made by the operator (`svc admin create-runner-token`). */
async function serverWideToken(name: string): Promise<string> {
  const made = Bun.spawn(
    [process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "admin", "create-runner-token", "--name", name, "--data-dir", s.dataDir],
    { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: s.dataDir, ...(await databaseEnv(s.dataDir)) }, stdout: "pipe", stderr: "pipe" },
  );
  const token = (await new Response(made.stdout).text()).trim();
  expect(await made.exited).toBe(0);
  return token;
}

describe("a server-wide runner with 1 slot, 4 slow runs of workspace A queued before workspace B's", () => {
  test("B's one-request run is the next it starts: it ends within one slot's turn (3.5 s) of being queued", async () => {
    const beta = await s.userWithKey("owner@beta.test", "beta");
    const slow = await automationIn(s.key, "backlog", [{ request: { url: "/slow?ms=3000", timeout_ms: 60_000 }, expect: [{ status: 200 }] }]);
    const quick = await automationIn(beta.key, "quick", [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }]);
    runner = startRunnerProcess(s.url, await serverWideToken("shared"), [], { SVC_RUNNER_CONCURRENCY: "1" });
    // Its worker process started (one run through it): what is measured below is the order of claims, not start-up.
    const warm = await start(beta.key, quick);
    expect((await finished(beta.key, quick.project, warm)).status).toBe("passed");

    const backlog: string[] = [];
    for (let i = 0; i < 4; i++) backlog.push(await start(s.key, slow));
    // The first of A's runs holds the slot; B's run is queued behind A's other three.
    expect(await waitUntilAsync(async () => (await runOf(s.key, slow.project, backlog[0] as string)).status === "running", 20_000)).toBe(true);
    const other = await start(beta.key, quick);
    const run = await finished(beta.key, quick.project, other);
    expect(run.status).toBe("passed");
    expect(Date.parse(run.finished_at as string) - Date.parse(run.created_at)).toBeLessThan(3500);
    // A's backlog is still there: B did not wait for it.
    const waiting = await Promise.all(backlog.slice(2).map((id) => runOf(s.key, slow.project, id)));
    expect(waiting.map((r) => r.status)).toEqual(["queued", "queued"]);
  }, 60_000);
});

describe("a server-wide runner claiming one run at a time, each finished before the next claim", () => {
  test("goes round workspaces, then projects: A's first run, B's, A's other project's, then the rest of A's backlog", async () => {
    const beta = await s.userWithKey("owner@beta.test", "beta");
    const backlog = await automationIn(s.key, "backlog-a", [{ request: { url: "/items/1" } }]);
    const other = await automationIn(s.key, "other-a", [{ request: { url: "/items/1" } }]);
    const quick = await automationIn(beta.key, "quick-b", [{ request: { url: "/items/1" } }]);
    // Only the runner played below claims, and no run of the test before is left waiting or counted as running.
    await runner?.stop("SIGKILL");
    runner = null;
    await s.sql("UPDATE runs SET status = 'cancelled' WHERE status IN ('queued', 'running')");
    const token = await serverWideToken("played");
    expect((await runnerCall(s.url, token, "/hello", { protocol: 1, version: "test", labels: [], capabilities: { browser: false } })).status).toBe(200);
    // A few milliseconds apart: runs queued within the same millisecond have no order among them (ties go by id).
    const a: string[] = [];
    for (let i = 0; i < 3; i++) {
      a.push(await start(s.key, backlog));
      await Bun.sleep(3);
    }
    const a2 = await start(s.key, other);
    const b = await start(beta.key, quick);

    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { jobs } = await json<{ jobs: { id: string; claim: number }[] }>(await runnerCall(s.url, token, "/claim", { slots: 1, wait_ms: 0 }));
      expect(jobs.length).toBe(1);
      const job = jobs[0] as { id: string; claim: number };
      order.push(job.id);
      const refs = [{ id: job.id, claim: job.claim }];
      expect((await json<{ started: unknown[] }>(await runnerCall(s.url, token, "/start", { runs: refs }))).started.length).toBe(1);
      const result = {
        status: "passed",
        error: null,
        summary: { steps: 1, passed: 1, failed: 0, skipped: 0 },
        steps: [{ index: 0, name: "get", status: "passed", duration_ms: 1, message: null }],
        artifacts: [],
        attempts: [{ attempt: 1, status: "passed", error: null, message: null, duration_ms: 1 }],
      };
      const finished = await json<{ recorded: string[] }>(await runnerCall(s.url, token, "/finish", { runs: [{ ...refs[0], result }] }));
      expect(finished.recorded).toEqual([job.id]);
    }
    expect(order).toEqual([a[0], b, a2, a[1], a[2]] as string[]);
  }, 60_000);
});
