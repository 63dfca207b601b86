// The per-IP request budget and runners: a runner's own calls (its token valid) are spared, so a CI behind the
// same address that uses the budget up cannot end a healthy runner's runs as "runner lost"; a call with a token that
// is not a runner's still counts against its address.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type RunnerProcess, runnerCall, startRunnerProcess } from "./helpers/remote-runner";
import { json, projectWithEnv } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntilAsync } from "./helpers/wait";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let runner: RunnerProcess | null = null;

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: true, per_ip_per_hour: 40 }, runner: { local: false, lease_ms: 3000 } });
});
afterAll(async () => {
  await runner?.stop("SIGKILL");
  await s.stop();
  await target.stop();
});

test("with its address's budget used up by others, a runner's run still heart-beats, finishes and passes; a bad token is still limited", async () => {
  const { project } = await projectWithEnv(s, "budget", { BASE_URL: target.url });
  const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name: "same-address", labels: [] }), 201);
  runner = startRunnerProcess(s.url, token);
  expect(await runner.waitFor("runner connected")).toBe(true);
  // Longer than the lease: its leases live on heartbeats the whole time.
  const steps = Array.from({ length: 6 }, () => ({ request: { url: "/slow?ms=1000" }, expect: [{ status: 200 }] }));
  const made = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/automations`, { name: "long", kind: "http", environment: "test", steps }),
    201,
  );
  const run = await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations/${made.id}/run`), 202);
  // Everyone else behind 127.0.0.1 uses the address's budget up.
  let limited = false;
  for (let i = 0; i < 60 && !limited; i++) limited = (await fetch(`${s.api}/me`, { headers: { authorization: `Bearer ${s.key}` } })).status === 429;
  expect(limited).toBe(true);
  const status = async () => (await s.sql<{ status: string; error: string | null }>("SELECT status, error FROM runs WHERE id = ?", run.id))[0];
  expect(await waitUntilAsync(async () => !["queued", "running"].includes(String((await status())?.status)), 30_000, 200)).toBe(true);
  expect(await status()).toEqual({ status: "passed", error: null });
  expect(runner.output()).not.toContain("too many requests");
  // A token that is not a runner's is not spared.
  const forged = await runnerCall(s.url, "svcr_notarealtokenatallnotarealtoken0000", "/heartbeat", { runs: [], wait_ms: 0 });
  expect(forged.status).toBe(429);
});
