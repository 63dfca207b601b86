// A server that goes away under a connected `svc runner` (maintenance, a restart, a network cut) and comes back:
// the runner retries at a slowing pace, logs one line per kind of call instead of one a second, and takes runs
// again once the server answers. The server stays up; a proxy in front of it is what goes away and comes back.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Server } from "bun";
import { type RunnerProcess, startRunnerProcess, startServerProxy } from "./helpers/remote-runner";
import { json, projectWithEnv, runToEnd } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

let s: TestServer;
let target: TargetApp;
let project: string;
let runner: RunnerProcess | null = null;
let proxy: Server<undefined> | null = null;

const startProxy = (port: number) => startServerProxy(s.url, port);

const lines = (text: string, msg: string) => text.split("\n").filter((l) => l.includes(`"msg":"${msg}"`));

beforeAll(async () => {
  target = startTargetApp();
  // The server executes nothing itself: a run that passes was executed by the runner.
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
  ({ project } = await projectWithEnv(s, "away", { BASE_URL: target.url }));
}, 60_000);
afterAll(async () => {
  await runner?.stop("SIGKILL");
  await proxy?.stop(true);
  await s.stop();
  await target.stop();
});

test("while the server is away a runner logs each kind of failed call once, slows its retries, and takes runs again when it is back", async () => {
  const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name: "patient-box", labels: [] }), 201);
  proxy = startProxy(0);
  const port = Number(proxy.port);
  runner = startRunnerProcess(`http://127.0.0.1:${port}`, token);
  expect(await runner.waitFor("runner connected")).toBe(true);
  const http = { kind: "http", environment: "test", steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }] };
  expect((await runToEnd(s, project, { name: "before", ...http })).status).toBe("passed");

  // Away: its waiting claim and heartbeat are cut, and every new connection is refused.
  await proxy.stop(true);
  proxy = null;
  await Bun.sleep(6_000);
  const away = runner.output();
  // At one attempt a second (as before), six seconds away were ~12 lines; paced, the first failure of each.
  expect(lines(away, "could not claim runs; retrying").length).toBe(1);
  expect(lines(away, "heartbeat failed; retrying").length).toBe(1);
  expect(lines(away, "could not claim runs; retrying")[0]).toContain('"failures":1');

  // Back on the same address: the runner finds it by itself (its next claim is at most 15 s away) and runs again.
  proxy = startProxy(port);
  const backAt = performance.now();
  expect((await runToEnd(s, project, { name: "after", ...http })).status).toBe("passed");
  expect(performance.now() - backAt).toBeLessThan(15_000 + 5_000);
  expect(await runner.waitFor("the server answers again", 15_000)).toBe(true);
  expect(await runner.stop("SIGTERM")).toBe(0);
  runner = null;
}, 60_000);
