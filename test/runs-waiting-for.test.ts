// A queued run that nothing connected can take says what it waits for: on get_run, get_group_run, in `--watch`'s
// progress and in the web app's data. Real servers (one executing runs itself, one with runner.local = false),
// runners that say hello over the real protocol, and a real `svc runner` that finally takes the run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sourceCli } from "./helpers/cli-source";
import { type RunnerProcess, runnerCall, startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, json, projectWithEnv, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const LEASE_MS = 1500;
const HELLO = { protocol: 1, version: "t", labels: [] as string[], capabilities: { browser: false } };
const NONE_EU = "waiting for a runner with the labels eu: none is connected";
const postgres = process.env.SVC_TEST_BACKEND === "postgres";

let s: TestServer;
let target: TargetApp;
let project: string;
const runners: RunnerProcess[] = [];

interface Waiting {
  status: string;
  waiting_for?: string | null;
}

const getRun = async (runId: string, srv = s, p = project) => json<Waiting>(await srv.call("GET", `/projects/${p}/runs/${runId}`));
const getGroupRun = async (id: string) => json<Waiting>(await s.call("GET", `/projects/${project}/group-runs/${id}`));

/** svc_runners_connected as /metrics says it. */
async function connectedInMetrics(): Promise<number> {
  const line = (await (await fetch(`${s.url}/metrics`)).text()).split("\n").find((l) => l.startsWith("svc_runners_connected "));
  return Number(line?.split(" ")[1]);
}

async function token(name: string, labels: string[], key = s.key): Promise<string> {
  return (await json<{ token: string }>(await s.call("POST", "/runners", { name, labels }, key), 201)).token;
}

/** Starts the automation as a group run of one: its group run and its run. */
async function startGroupOf(automationId: string): Promise<{ groupRunId: string; runId: string }> {
  const group = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/groups`, { name: `g-${crypto.randomUUID().slice(0, 8)}`, automation_ids: [automationId] }),
    201,
  );
  const gr = await json<{ id: string; runs: { id: string }[] }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
  return { groupRunId: gr.id, runId: String(gr.runs[0]?.id) };
}

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { lease_ms: LEASE_MS } });
  ({ project } = await projectWithEnv(s, "waiting", { BASE_URL: target.url }));
  await s.call("POST", `/projects/${project}/environments`, { name: "eu", variables: { BASE_URL: target.url }, runner_labels: ["eu"] });
}, 60_000);
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop("SIGKILL")));
  await s.stop();
  await target.stop();
});

describe("waiting_for", () => {
  test("a run whose environment requires labels no connected runner has says so until a runner with them connects, then runs", async () => {
    const auto = await createAutomation(s, project, { name: "eu check", kind: "http", environment: "eu", steps: [{ request: { url: "/items/1" } }] });
    const { groupRunId, runId } = await startGroupOf(auto);
    // The server's own engine never takes it (labels), and no runner is connected.
    expect(await getRun(runId)).toMatchObject({ status: "queued", waiting_for: NONE_EU });
    expect(await getGroupRun(groupRunId)).toMatchObject({ status: "queued", waiting_for: `1 run is ${NONE_EU}` });
    // Lists leave it out (get_run only), and a run that can start says nothing.
    const runs = await json<{ data: Record<string, unknown>[] }>(await s.call("GET", `/projects/${project}/runs?automation=${auto}`));
    expect(runs.data[0]?.id).toBe(runId);
    expect("waiting_for" in (runs.data[0] ?? {})).toBe(false);

    // A runner without the label changes nothing; another workspace's runner with it neither.
    await runnerCall(s.url, await token("no-label", ["us"]), "/hello", HELLO);
    const other = await s.userWithKey("owner@elsewhere.test", "elsewhere", "owner");
    await runnerCall(s.url, await token("theirs", ["eu"], other.key), "/hello", HELLO);
    expect((await getRun(runId)).waiting_for).toBe(NONE_EU);

    // A runner with the label that said hello can take it (it claims nothing here: it only said hello)…
    const eu = await token("eu-box", ["eu"]);
    await runnerCall(s.url, eu, "/hello", HELLO);
    expect(await getRun(runId)).toMatchObject({ status: "queued", waiting_for: null });
    expect((await getGroupRun(groupRunId)).waiting_for).toBeNull();
    const listed = async () => (await json<{ data: { name: string; connected: boolean }[] }>(await s.call("GET", "/runners"))).data;
    expect((await listed()).find((r) => r.name === "eu-box")?.connected).toBe(true);
    // /metrics counts the runners connected now, every workspace's: no-label, theirs and eu-box.
    expect(await connectedInMetrics()).toBe(3);
    // …until it has not been heard from for a lease: then it no longer counts as connected.
    expect(await waitUntilAsync(async () => (await getRun(runId)).waiting_for === NONE_EU, LEASE_MS + 5_000)).toBe(true);
    expect((await listed()).find((r) => r.name === "eu-box")?.connected).toBe(false);
    expect(await connectedInMetrics()).toBe(0);

    // A real runner with the label takes it; once it ran there is nothing to wait for.
    const r = startRunnerProcess(s.url, await token("eu-runner", ["eu"]));
    runners.push(r);
    expect(await waitForRun(s, project, runId, 20_000)).toMatchObject({ status: "passed", waiting_for: null });
    await r.stop("SIGKILL");
  }, 60_000);

  test("a browser run needs a runner with Chromium: connected runners without it are named as the reason", async () => {
    // Labels of its own: the runner of the test before (with Chromium) may still count as connected.
    await s.call("POST", `/projects/${project}/environments`, { name: "apac", variables: { BASE_URL: target.url }, runner_labels: ["apac", "fast"] });
    const auto = await createAutomation(s, project, { name: "apac page", kind: "browser", environment: "apac", steps: [{ goto: "/" }] });
    const { runId } = await startGroupOf(auto);
    expect((await getRun(runId)).waiting_for).toBe("waiting for a runner with the labels apac, fast that can run browser runs: none is connected");
    await runnerCall(s.url, await token("apac-headless", ["apac", "fast"]), "/hello", HELLO);
    expect((await getRun(runId)).waiting_for).toBe(
      "waiting for a runner with the labels apac, fast that can run browser runs: the connected ones have no Chromium",
    );
    await s.call("POST", `/projects/${project}/runs/${runId}/cancel`);
    expect(await getRun(runId)).toMatchObject({ status: "cancelled", waiting_for: null });
  }, 30_000);

  test("svc automations run --watch prints what the run waits for in its progress", async () => {
    const auto = await createAutomation(s, project, { name: "eu watched", kind: "http", environment: "eu", steps: [{ request: { url: "/items/1" } }] });
    const cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key });
    const proc = Bun.spawn([process.execPath, `${import.meta.dir}/../src/main.ts`, "automations", "run", auto, "--project", project, "--watch"], {
      cwd: cli.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cli.cwd, SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let err = "";
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stderr) err += decoder.decode(chunk);
    })();
    try {
      // The first progress read is held by the server for a few seconds (WATCH_PROGRESS_SECONDS), then answered.
      expect(await waitUntil(() => err.includes(`queued — ${NONE_EU}`), 15_000)).toBe(true);
      expect(err).toMatch(/run run_\w+ queued — waiting for a runner with the labels eu: none is connected/);
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
      cli.remove();
    }
    // Nobody takes it: cancelled so that the next test's runner does not.
    const listed = await json<{ data: { id: string }[] }>(await s.call("GET", `/projects/${project}/runs?automation=${auto}`));
    for (const r of listed.data) await s.call("POST", `/projects/${project}/runs/${r.id}/cancel`);
  }, 30_000);

  test("a server that executes no runs itself (runner.local = false) says its runs wait for any runner (on SQLite, the only node)", async () => {
    const quiet = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false, lease_ms: LEASE_MS } });
    try {
      const { project: p } = await projectWithEnv(quiet, "queue-only", { BASE_URL: target.url });
      const auto = await createAutomation(quiet, p, { name: "anywhere", kind: "http", environment: "test", steps: [{ request: { url: "/items/1" } }] });
      const run = await json<{ id: string }>(await quiet.call("POST", `/projects/${p}/automations/${auto}/run`, {}), 202);
      // On PostgreSQL another node may execute it: nothing to say.
      expect((await getRun(run.id, quiet, p)).waiting_for).toBe(
        postgres ? null : "waiting for a runner (this server executes no runs itself: runner.local is false): none is connected",
      );
      const tok = (await json<{ token: string }>(await quiet.call("POST", "/runners", { name: "any", labels: [] }), 201)).token;
      await runnerCall(quiet.url, tok, "/hello", HELLO);
      expect((await getRun(run.id, quiet, p)).waiting_for).toBeNull();
    } finally {
      await quiet.stop();
    }
  }, 60_000);
});
