// Runs ended by deleting what they belong to (an automation, a project) stop on the remote runner executing them
// within a second, with the default lease: the "cancelled" notice goes out once the deletion is committed, so the
// runner's waiting heartbeat that wakes on it reads the run as ended (on PostgreSQL it read the old state before,
// and waited a third of a lease — 10 s — for its next look).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunnerProcess, startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, json, projectWithEnv, startRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil } from "./helpers/wait";

let s: TestServer;
let target: TargetApp;
let runner: RunnerProcess;

beforeAll(async () => {
  target = startTargetApp();
  // The default lease (30 s): a heartbeat waits up to 10 s unless a notice wakes it.
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
  const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name: "notice-box", labels: [] }), 201);
  runner = startRunnerProcess(s.url, token);
  expect(await runner.waitFor("runner connected")).toBe(true);
}, 60_000);
afterAll(async () => {
  await runner.stop("SIGKILL");
  await s.stop();
  await target.stop();
});

/** When the runner stopped the run, by its own log line (same clock), after `since` (ms since the epoch). */
async function stoppedWithin(runId: string, since: number): Promise<number> {
  const needle = `"run_id":"${runId}","status":"cancelled"`;
  if (!(await runner.waitFor(needle, 15_000))) console.log(runner.output());
  expect(runner.output()).toContain(needle);
  const line = runner
    .output()
    .split("\n")
    .find((l) => l.includes(needle));
  return Date.parse((JSON.parse(String(line)) as { time: string }).time) - since;
}

async function heldRun(project: string, key: string): Promise<{ automation: string; runId: string }> {
  const automation = await createAutomation(s, project, {
    name: `held-${key}`,
    kind: "http",
    environment: "test",
    steps: [{ request: { url: `/hold/${key}` } }],
  });
  const runId = await startRun(s, project, automation);
  expect(await waitUntil(() => target.held(key).length === 1, 20_000)).toBe(true);
  // The runner's heartbeat is now waiting in the server with this run in it.
  await Bun.sleep(300);
  return { automation, runId };
}

test("deleting an automation stops its run on the runner within a second", async () => {
  const { project } = await projectWithEnv(s, "notice-automation", { BASE_URL: target.url });
  const { automation, runId } = await heldRun(project, "notice-automation");
  const t0 = Date.now();
  expect((await s.call("DELETE", `/projects/${project}/automations/${automation}`)).status).toBe(204);
  expect(await stoppedWithin(runId, t0)).toBeLessThan(1000);
  target.release("notice-automation");
}, 40_000);

test("deleting a project stops its runs on the runner within a second", async () => {
  const { project } = await projectWithEnv(s, "notice-project", { BASE_URL: target.url });
  const { runId } = await heldRun(project, "notice-project");
  const t0 = Date.now();
  expect((await s.call("DELETE", `/projects/${project}`)).status).toBe(204);
  expect(await stoppedWithin(runId, t0)).toBeLessThan(1000);
  target.release("notice-project");
}, 40_000);
