// A runner that cannot renew its leases (the server unreachable, its heartbeats refused) stops its runs before the
// leases can end: once a lease ends the server ends the run ("runner lost") or gives it to another runner, and a run
// must never execute twice at once. Here a proxy in front of the server goes away mid-run; the target the run calls
// is reached directly, so it sees whether the runner went on. The server logs every run a runner ended, and every
// run a lost runner left, as one "run finished" line, as for its own engine's runs.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Server } from "bun";
import { type RunnerProcess, startRunnerProcess, startServerProxy } from "./helpers/remote-runner";
import { json, projectWithEnv, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

setDefaultTimeout(60_000);

const LEASE_MS = 3000;
let s: TestServer;
let runner: RunnerProcess | null = null;
let proxy: Server<undefined> | null = null;
const ticks: { i: number; at: number }[] = [];
/** The server's log lines (it runs in this process): what it wrote to stderr. */
const logged: string[] = [];
const write = process.stderr.write.bind(process.stderr);
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
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(String(chunk));
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  s = await startTestServer({ rate_limit: { enabled: false }, log_level: "info", runner: { local: false, lease_ms: LEASE_MS } });
});
const finishedLines = (runId: string) =>
  logged
    .join("")
    .split("\n")
    .filter((l) => l.includes('"msg":"run finished"') && l.includes(runId))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
afterAll(async () => {
  process.stderr.write = write;
  await runner?.stop("SIGKILL");
  await proxy?.stop(true);
  await s.stop();
  await target.stop(true);
});

test("cut off from the server mid-run, a runner stops the run before its lease ends: the target hears nothing of it after the server ended it", async () => {
  const { project } = await projectWithEnv(s, "fence", { BASE_URL: `http://127.0.0.1:${target.port}` });
  const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name: "cut-off", labels: [] }), 201);
  proxy = startServerProxy(s.url);
  runner = startRunnerProcess(`http://127.0.0.1:${proxy.port}`, token);
  expect(await runner.waitFor("runner connected")).toBe(true);
  // First a run the runner ends itself, failed: its line carries the failure, as the engine's lines do.
  const failing = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/automations`, {
      name: "wrong id",
      kind: "http",
      environment: "test",
      steps: [{ request: { url: "/tick?i=-1" }, expect: [{ json: "$.ok", equals: false }] }],
    }),
    201,
  );
  const failed = await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations/${failing.id}/run`), 202);
  expect((await waitForRun(s, project, failed.id, 20_000)).status).toBe("failed");
  expect(await waitUntil(() => finishedLines(failed.id).length > 0, 5_000)).toBe(true);
  expect(finishedLines(failed.id)[0]).toMatchObject({ status: "failed", failure: expect.stringContaining("step 1") });
  ticks.length = 0;
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
  // The server's log says how it ended, with the run's id.
  const [line] = finishedLines(run.id);
  expect(line).toMatchObject({ run_id: run.id, status: "error" });
  expect(String(line?.error)).toContain("runner lost");
});
