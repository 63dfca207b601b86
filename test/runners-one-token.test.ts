// One runner token, one `svc runner` process at a time: a second process started with a token in use waits
// (saying why) instead of overwriting the first's labels and taking its place; it takes over as soon as the first
// stops (SIGTERM frees the token at once), and a process the server no longer counts as the holder is refused.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { instanceCall, type RunnerProcess, startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntilAsync } from "./helpers/wait";

/** Long enough that a second process waiting out the lease (rather than asking every second) is seen to. */
const LEASE_MS = 8000;
let s: TestServer;
let target: TargetApp;
let project: string;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false, lease_ms: LEASE_MS } });
  ({ project } = await projectWithEnv(s, "one-token", { BASE_URL: target.url }));
}, 60_000);
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop("SIGKILL")));
  await s.stop();
  await target.stop();
});

function runner(token: string, labels: string): RunnerProcess {
  const r = startRunnerProcess(s.url, token, ["--labels", labels]);
  runners.push(r);
  return r;
}

/** A hello as a `svc runner` process without Chromium says it. */
const HELLO = { protocol: 1, version: "test", labels: [], capabilities: { browser: false } };

const shown = async (id: string) => json<{ labels: string[] }>(await s.call("GET", `/runners/${id}`));

test("a second process on a token in use waits, saying why; the first keeps its labels and its runs; on its SIGTERM the second takes over", async () => {
  const made = await json<{ id: string; token: string }>(await s.call("POST", "/runners", { name: "shared-box", labels: [] }), 201);
  const first = runner(made.token, "first");
  expect(await first.waitFor("runner connected")).toBe(true);
  const second = runner(made.token, "second");
  expect(await second.waitFor("in use by another svc runner process")).toBe(true);
  expect(second.output()).toContain('another svc runner process holds the token of runner \\"shared-box\\"');
  expect(second.output()).not.toContain("runner connected");
  expect(second.output()).not.toContain(made.token);
  // The first's labels stand, and it still takes runs.
  expect((await shown(made.id)).labels).toEqual(["first"]);
  const automation = await createAutomation(s, project, {
    name: "shared-token-run",
    kind: "http",
    environment: "test",
    steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }],
  });
  expect((await waitForRun(s, project, await startRun(s, project, automation))).status).toBe("passed");
  // Its own log says it ran it (the line may follow the recorded result by a moment).
  expect(await first.waitFor('"msg":"run finished"', 5_000)).toBe(true);

  // The first stops: its goodbye frees the token, and the second connects within its next try, not a lease later.
  expect(await first.stop("SIGTERM")).toBe(0);
  const freed = performance.now();
  expect(await second.waitFor("runner connected", LEASE_MS + 3_000)).toBe(true);
  // Within a second or so of the SIGTERM, not at the end of the lease it was told to wait out.
  expect(performance.now() - freed).toBeLessThan(3_000);
  expect((await shown(made.id)).labels).toEqual(["second"]);
  expect((await waitForRun(s, project, await startRun(s, project, automation))).status).toBe("passed");
  expect(await second.waitFor('"msg":"run finished"', 5_000)).toBe(true);
  expect(await second.stop("SIGTERM")).toBe(0);
}, 60_000);

test("a process that is no longer the token's holder is refused (409) on every call but hello; a malformed instance is a 400", async () => {
  const made = await json<{ id: string; token: string }>(await s.call("POST", "/runners", { name: "fenced-box", labels: [] }), 201);
  const call = (path: string, instance: string, body: unknown) => instanceCall(s.url, made.token, instance, path, body);
  const hello = HELLO;
  expect((await call("/hello", "instance-aaaa", hello)).status).toBe(200);
  // Heard from just now: another process's hello is refused, with when to ask again.
  const refused = await call("/hello", "instance-bbbb", hello);
  expect(refused.status).toBe(409);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(LEASE_MS / 1000);
  expect(((await refused.json()) as { error: string }).error).toBe("conflict");
  // Unheard for a lease, the token passes to the next process; the old one is then refused on every call.
  expect(await waitUntilAsync(async () => (await call("/hello", "instance-bbbb", hello)).status === 200, LEASE_MS + 3_000, 250)).toBe(true);
  const stale = await call("/claim", "instance-aaaa", { slots: 1, wait_ms: 0 });
  expect(stale.status).toBe(409);
  expect(((await stale.json()) as { message: string }).message).toContain("another svc runner process took the token");
  expect((await call("/heartbeat", "instance-aaaa", { runs: [], wait_ms: 0 })).status).toBe(409);
  expect((await call("/claim", "instance-bbbb", { slots: 1, wait_ms: 0 })).status).toBe(200);
  expect((await call("/claim", "not an id!", { slots: 1, wait_ms: 0 })).status).toBe(400);
  // A goodbye frees it at once.
  expect((await call("/bye", "instance-bbbb", {})).status).toBe(200);
  expect((await call("/hello", "instance-cccc", hello)).status).toBe(200);
}, 30_000);

test("a claim a process left waiting is refused (409) once another process took the token: the run and its secrets go to the holder", async () => {
  const made = await json<{ id: string; token: string }>(await s.call("POST", "/runners", { name: "frozen-box", labels: [] }), 201);
  const call = (path: string, instance: string, body: unknown) => instanceCall(s.url, made.token, instance, path, body);
  const hello = HELLO;
  expect((await call("/hello", "instance-frozen", hello)).status).toBe(200);
  // The first process waits for work, then freezes (its claim stays open); a lease later another takes the token.
  const waiting = call("/claim", "instance-frozen", { slots: 1, wait_ms: 25_000 });
  expect(await waitUntilAsync(async () => (await call("/hello", "instance-thawed", hello)).status === 200, LEASE_MS + 3_000, 250)).toBe(true);
  const id = await createAutomation(s, project, { name: "for the holder", kind: "http", environment: "test", steps: [{ request: { url: "/items/1" } }] });
  const runId = await startRun(s, project, id);
  const stale = await waiting;
  expect(stale.status).toBe(409);
  expect(JSON.stringify(await stale.json())).not.toContain(runId);
  const claimed = (await (await call("/claim", "instance-thawed", { slots: 1, wait_ms: 5_000 })).json()) as { jobs: { id: string }[] };
  expect(claimed.jobs.map((j) => j.id)).toEqual([runId]);
  await call("/release", "instance-thawed", { runs: claimed.jobs.map((j) => ({ id: j.id, claim: (j as unknown as { claim: number }).claim })) });
  await call("/bye", "instance-thawed", {});
}, 40_000);
