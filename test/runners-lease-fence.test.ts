// A runner that cannot renew its leases (the server unreachable, its heartbeats refused) stops its runs before the
// leases can end: once a lease ends the server ends the run ("runner lost") or gives it to another runner, and a run
// must never execute twice at once. Here a proxy in front of the server goes away mid-run; the target the run calls
// is reached directly, so it sees whether the runner went on.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Server } from "bun";
import { type RunnerProcess, startRunnerProcess } from "./helpers/remote-runner";
import { json, projectWithEnv, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

setDefaultTimeout(60_000);

const LEASE_MS = 3000;
let s: TestServer;
let runner: RunnerProcess | null = null;
let proxy: Server<undefined> | null = null;
const ticks: { i: number; at: number }[] = [];
const target = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    ticks.push({ i: Number(new URL(req.url).searchParams.get("i")), at: Date.now() });
    await Bun.sleep(150);
    return Response.json({ ok: true });
  },
});

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false, lease_ms: LEASE_MS } });
});
afterAll(async () => {
  await runner?.stop("SIGKILL");
  await proxy?.stop(true);
  await s.stop();
  await target.stop(true);
});

test("cut off from the server mid-run, a runner stops the run before its lease ends: the target hears nothing of it after the server ended it", async () => {
  const { project } = await projectWithEnv(s, "fence", { BASE_URL: `http://127.0.0.1:${target.port}` });
  const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name: "cut-off", labels: [] }), 201);
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    fetch(req) {
      const u = new URL(req.url);
      return fetch(`${s.url}${u.pathname}${u.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        duplex: "half",
        signal: req.signal,
      } as RequestInit);
    },
  });
  runner = startRunnerProcess(`http://127.0.0.1:${proxy.port}`, token);
  expect(await runner.waitFor("runner connected")).toBe(true);
  const steps = Array.from({ length: 80 }, (_, i) => ({ request: { url: `/tick?i=${i}` }, expect: [{ status: 200 }] }));
  const made = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/automations`, { name: "ticker", kind: "http", environment: "test", steps }),
    201,
  );
  const run = await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations/${made.id}/run`), 202);
  expect(await waitUntil(() => ticks.length >= 3, 20_000)).toBe(true);
  // The network between the runner and the server goes; the runner can still reach the target.
  await proxy.stop(true);
  const ended = await waitForRun(s, project, run.id, 30_000);
  expect(ended.status).toBe("error");
  expect(ended.error).toContain("runner lost");
  const endedAt = Date.parse(String((ended as unknown as { finished_at: string }).finished_at));
  // Anything the runner still sent would arrive now.
  await Bun.sleep(2000);
  expect(ticks.filter((t) => t.at > endedAt)).toEqual([]);
  expect(ticks.length).toBeLessThan(80);
  expect(runner.output()).toContain("it is stopped here, as the server will end it or give it to another runner");
});
