// A server stopped (SIGTERM, an upgrade) while `svc runner` processes are connected: it stops at once instead of
// waiting out their claims' long polls, it ends no runner's lease while it stops, and once it is back (within a
// lease) a healthy runner's run goes on to its end instead of being ended "runner lost". Away for longer than a
// lease, the runner stops the run itself (test/runners-lease-fence.test.ts): it cannot tell a server that is down
// from one it is cut off from, which may have given the run to another runner.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { type RunnerProcess, startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, json, projectWithEnv, startRun } from "./helpers/runs";
import { flattenFlags, startTestServer, type TestServer, tempDir, testDatabaseUrl } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const LEASE_MS = 3000;
let target: TargetApp;
const runners: RunnerProcess[] = [];
const stops: (() => Promise<void>)[] = [];

beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop("SIGKILL")));
  for (const stop of stops) await stop().catch(() => undefined);
  await target.stop();
});

async function serverWithRunner(name: string, dataDir?: string, leaseMs = LEASE_MS): Promise<{ s: TestServer; project: string; runner: RunnerProcess }> {
  const s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false, lease_ms: leaseMs }, ...(dataDir ? { data_dir: dataDir } : {}) });
  stops.push(() => s.stop());
  const { project } = await projectWithEnv(s, name, { BASE_URL: target.url });
  const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name, labels: [] }), 201);
  const runner = startRunnerProcess(s.url, token);
  runners.push(runner);
  expect(await runner.waitFor("runner connected")).toBe(true);
  return { s, project, runner };
}

test("a server with an idle runner connected stops at once, not after the runner's 25 s claim", async () => {
  const { s } = await serverWithRunner("idle-box");
  // The runner's claim is waiting in the server (a long poll of up to 25 s).
  await Bun.sleep(500);
  const t0 = performance.now();
  await s.stop();
  expect(performance.now() - t0).toBeLessThan(5_000);
}, 60_000);

test("a runner's run outlives a server restart within its lease: nothing ends it while the server stops or as it returns", async () => {
  // A lease long enough for the server to stop, stay away a while and start again on a loaded machine.
  const lease = 10_000;
  const dataDir = tempDir();
  const { s, project, runner } = await serverWithRunner("steady-box", dataDir, lease);
  const automation = await createAutomation(s, project, {
    name: "held-across-restart",
    kind: "http",
    environment: "test",
    steps: [{ request: { url: "/hold/restart" }, expect: [{ status: 200 }] }],
  });
  const runId = await startRun(s, project, automation);
  expect(await waitUntil(() => target.held("restart").length === 1, 20_000)).toBe(true);
  const port = new URL(s.url).port;
  const t0 = performance.now();
  await s.stop();
  // The runner's heartbeat that was waiting answered at once: the drain did not wait for it.
  expect(performance.now() - t0).toBeLessThan(5_000);
  // Away for a while (the runner's heartbeats fail meanwhile), within the lease.
  await Bun.sleep(2_000);
  const databaseUrl = await testDatabaseUrl(dataDir);
  const flags = {
    port: Number(port),
    data_dir: dataDir,
    log_level: "warn",
    rate_limit: { enabled: false },
    runner: { local: false, lease_ms: lease },
    ...(databaseUrl ? { database: { url: databaseUrl } } : {}),
  };
  const config = loadConfig({ env: {}, flags: flattenFlags(flags) });
  const back = await startServer(config);
  stops.push(() => back.stop());
  const run = async () =>
    json<{ status: string; error: string | null }>(
      await fetch(`${back.url}/api/v1/ops/projects/${project}/runs/${runId}`, { headers: { authorization: `Bearer ${s.key}` } }),
    );
  // Past the lease once more, with the lease sweeper running: the runner heart-beat again and still holds it.
  await Bun.sleep(lease + 1_000);
  expect(await run()).toMatchObject({ status: "running", error: null });
  target.release("restart");
  expect(await waitUntilAsync(async () => (await run()).status !== "running", 30_000)).toBe(true);
  expect(await run()).toMatchObject({ status: "passed", error: null });
  expect(runner.output()).not.toContain("runner lost");
  expect(runner.output()).not.toContain("it is stopped here");
}, 90_000);
