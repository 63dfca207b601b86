// Runners on other machines, end to end: a real server with runner.local = false and short leases, real
// `svc runner` processes, and a real target. A test that plays a runner that claims and dies talks the protocol.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sourceCli } from "./helpers/cli-source";
import { type RunnerProcess, runnerCall, startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, getRun, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const LEASE_MS = 1500;
let s: TestServer;
let target: TargetApp;
let project: string;
const runners: RunnerProcess[] = [];

const http = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `a-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps,
  ...extra,
});

async function token(name: string, labels: string[] = [], key = s.key): Promise<string> {
  return (await json<{ token: string }>(await s.call("POST", "/runners", { name, labels }, key), 201)).token;
}

function runner(tok: string, args: string[] = []): RunnerProcess {
  const r = startRunnerProcess(s.url, tok, args);
  runners.push(r);
  return r;
}

/** Who holds a run, as stored (the API does not show it). */
async function holder(runId: string): Promise<{ runner_id: string | null; status: string } | undefined> {
  return (await s.sql<{ runner_id: string | null; status: string }>("SELECT runner_id, status FROM runs WHERE id = ?", runId))[0];
}

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false, lease_ms: LEASE_MS } });
  ({ project } = await projectWithEnv(s, "remote", { BASE_URL: target.url }, { API_TOKEN: "acme-secret-value-1234" }));
}, 60_000);
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop("SIGKILL")));
  await s.stop();
  await target.stop();
});

describe("svc runner", () => {
  test("with runner.local = false the server only queues; a runner executes the group run and exits cleanly on SIGTERM", async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await createAutomation(s, project, http([{ request: { url: "/items/1" }, expect: [{ status: 200 }] }])));
    const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "remote-group", automation_ids: ids }), 201);
    const gr = await json<{ id: string; runs: { id: string }[] }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
    const runIds = gr.runs.map((r) => r.id);
    expect(runIds.length).toBe(3);
    for (const id of runIds) expect((await getRun(s, project, id)).status).toBe("queued");

    const tok = await token("box-1");
    const r = runner(tok, ["--concurrency", "2"]);
    const runnerId = (await json<{ data: { id: string; name: string }[] }>(await s.call("GET", "/runners"))).data.find((x) => x.name === "box-1")?.id;
    for (const id of runIds) {
      const run = await waitForRun(s, project, id);
      expect(run.status).toBe("passed");
      expect(run.steps[0]?.response?.status).toBe(200);
      expect((await holder(id))?.runner_id).toBe(String(runnerId));
      // Where it ran is part of the run, for whoever reads why it failed there.
      expect(run.runner).toEqual({ id: String(runnerId), name: "box-1" });
    }
    const inGroup = await json<{ runs: { runner: unknown }[] }>(await s.call("GET", `/projects/${project}/group-runs/${gr.id}`));
    expect(inGroup.runs.map((x) => x.runner)).toEqual(runIds.map(() => ({ id: String(runnerId), name: "box-1" })));
    const inList = await json<{ data: { id: string; runner: unknown }[] }>(await s.call("GET", `/projects/${project}/runs?group_run=${gr.id}`));
    expect(inList.data.map((x) => x.runner)).toEqual(runIds.map(() => ({ id: String(runnerId), name: "box-1" })));
    // The JUnit report a CI job keeps says where each ran.
    const junit = await (await s.call("GET", `/projects/${project}/group-runs/${gr.id}/junit`)).text();
    for (const id of runIds) expect(junit).toContain(`<system-out>run ${id} on runner box-1\n`);
    // The runs a runner executed, by its name or id; a name no runner has is a 404 naming the filter.
    const ranBy = async (ref: string) =>
      (await json<{ data: { id: string }[] }>(await s.call("GET", `/projects/${project}/runs?runner=${encodeURIComponent(ref)}`))).data.map((x) => x.id).sort();
    expect(await ranBy("box-1")).toEqual([...runIds].sort());
    expect(await ranBy(String(runnerId))).toEqual([...runIds].sort());
    const nobody = await s.call("GET", `/projects/${project}/runs?runner=no-such-runner`);
    expect(nobody.status).toBe(404);
    expect(((await nobody.json()) as { message: string }).message).toContain('runner "no-such-runner" not found');
    const cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key });
    try {
      const shown = await cli.run(["runs", "show", String(runIds[0]), "--project", project]);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`\\nrunner +box-1 \\(${runnerId}\\)\\n`));
      const byRunner = await cli.run(["runs", "list", "--project", project, "--runner", "box-1", "--json"]);
      expect(byRunner.code).toBe(0);
      expect((JSON.parse(byRunner.stdout) as { data: { id: string }[] }).data.map((x) => x.id).sort()).toEqual([...runIds].sort());
      // A CI job watching a group run reads, for each failure, the runner it failed on.
      const failing = await createAutomation(s, project, http([{ request: { url: "/items/1" }, expect: [{ status: 500 }] }], { name: "fails-remotely" }));
      await json(await s.call("POST", `/projects/${project}/groups`, { name: "remote-failing", automation_ids: [failing] }), 201);
      const watched = await cli.run(["groups", "run", "remote-failing", "--project", project, "--watch"]);
      expect(watched.code).not.toBe(0);
      expect(watched.stdout).toMatch(/\n1\) fails-remotely \(run_\w+\) failed on runner box-1\n/);
    } finally {
      cli.remove();
    }
    const listed = await json<{ version: string; browser: boolean; last_seen_at: string | null; running: number }>(await s.call("GET", `/runners/${runnerId}`));
    expect(listed.version).not.toBeNull();
    expect(listed.last_seen_at).not.toBeNull();
    expect(await r.stop("SIGTERM")).toBe(0);
    expect(r.output()).not.toContain(tok);
    expect(r.output()).not.toContain("acme-secret-value-1234");
  }, 60_000);

  test("a runs filter by a runner name two runners share is refused, naming both", async () => {
    const first = await json<{ id: string }>(await s.call("POST", "/runners", { name: "twin", labels: [] }), 201);
    const second = await json<{ id: string }>(await s.call("POST", "/runners", { name: "twin", labels: [] }), 201);
    const res = await s.call("GET", `/projects/${project}/runs?runner=twin`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; message: string; details: { path: string }[] };
    expect(body.error).toBe("invalid_request");
    expect(body.message).toContain(first.id);
    expect(body.message).toContain(second.id);
    expect(body.details[0]?.path).toBe("runner");
    // By id, each is its own filter.
    expect((await s.call("GET", `/projects/${project}/runs?runner=${first.id}`)).status).toBe(200);
  });

  test("an alert about a run a runner executed names the runner: the webhook's body and the Slack line", async () => {
    const received: { path: string; body: string }[] = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        received.push({ path: new URL(req.url).pathname, body: await req.text() });
        return new Response(null, { status: 204 });
      },
    });
    const r = runner(await token("alerting-box"));
    try {
      const hook = `http://127.0.0.1:${receiver.port}`;
      await json(
        await s.call("POST", `/projects/${project}/alert-channels`, {
          name: "remote hook",
          kind: "webhook",
          url: `${hook}/hook`,
          secret: "remote-hook-secret-1",
        }),
        201,
      );
      await json(await s.call("POST", `/projects/${project}/alert-channels`, { name: "remote slack", kind: "slack", url: `${hook}/slack` }), 201);
      const failing = await createAutomation(s, project, http([{ request: { url: "/items/1" }, expect: [{ status: 500 }] }], { name: "alerts-remotely" }));
      const runId = await startRun(s, project, failing);
      const run = await waitForRun(s, project, runId);
      expect(run.status).toBe("failed");
      // A runner executed it (this test's, or one an earlier test left connected).
      expect(run.runner?.name).toBeString();
      expect(await waitUntil(() => received.filter((x) => x.body.includes(runId)).length >= 2, 10_000)).toBe(true);
      const body = JSON.parse(received.find((x) => x.path === "/hook" && x.body.includes(runId))?.body ?? "{}");
      expect(body).toMatchObject({ event: "failing", automation: { name: "alerts-remotely" }, run: { id: runId, status: "failed", runner: run.runner } });
      const slack = JSON.parse(received.find((x) => x.path === "/slack" && x.body.includes(runId))?.body ?? "{}") as { text: string };
      expect(slack.text).toContain(`automation "alerts-remotely" in test is failing — run failed on runner ${run.runner?.name}: `);
    } finally {
      await r.stop("SIGTERM");
      receiver.stop(true);
      // The channels would alert on the other tests' failures.
      for (const name of ["remote hook", "remote slack"]) {
        expect((await s.call("DELETE", `/projects/${project}/alert-channels/${encodeURIComponent(name)}`)).status).toBe(204);
      }
    }
  }, 40_000);

  test("on SIGTERM a runner lets its running run finish, records it, and exits 0", async () => {
    const r = runner(await token("term-box"));
    const runId = await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/hold/remote-term" } }])));
    expect(await waitUntil(() => target.held("remote-term").length === 1, 20_000)).toBe(true);
    r.proc.kill("SIGTERM");
    expect(await r.waitFor("stopping the runner")).toBe(true);
    target.release("remote-term");
    expect(await r.proc.exited).toBe(0);
    expect((await getRun(s, project, runId)).status).toBe("passed");
  }, 40_000);

  test("a run still running when the runner's grace ends is handed back at once, as a lost runner's: ended, or queued again while its retries allow", async () => {
    const r = runner(await token("short-grace-box"), ["--grace-ms", "200"]);
    const once = await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/hold/remote-grace" } }])));
    const retried = await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/hold/remote-grace" } }], { retries: 1 })));
    expect(await waitUntil(() => target.held("remote-grace").length === 2, 20_000)).toBe(true);
    r.proc.kill("SIGTERM");
    expect(await r.proc.exited).toBe(0);
    target.release("remote-grace");
    const stopped = 'runner stopped: the svc runner process of runner "short-grace-box" was stopped before the run ended';
    expect(await getRun(s, project, once)).toMatchObject({ status: "error", error: stopped });
    // A routine stop costs it no more than a crash would: its execution is an attempt, and its retry is left.
    const again = (await getRun(s, project, retried)) as unknown as { status: string; attempts: { status: string; error: string }[] };
    expect(again.status).toBe("queued");
    expect(again.attempts).toEqual([expect.objectContaining({ attempt: 1, status: "error", error: stopped })]);
    expect(r.output()).toContain("runs still running at the end of the grace period were handed back");
    // Not left in the queue for the next test's runners.
    expect((await s.call("POST", `/projects/${project}/runs/${retried}/cancel`)).status).toBe(200);
  }, 40_000);

  test("plain http:// to another machine is refused without --insecure-http; with it, a warning", async () => {
    // Not the test server: an address that is not this machine.
    const r = startRunnerProcess("http://192.0.2.10:8080", "svcr_token", []);
    runners.push(r);
    expect(await r.proc.exited).toBe(2);
    expect(r.output()).toContain("--insecure-http");
    const insecure = startRunnerProcess("http://192.0.2.10:8080", "svcr_token", ["--insecure-http"]);
    runners.push(insecure);
    expect(await insecure.waitFor("warning: --insecure-http")).toBe(true);
    expect(await insecure.stop("SIGTERM")).toBe(0);
  }, 30_000);

  test("a runner of another protocol is refused with a message saying what to run", async () => {
    const tok = await token("old-box");
    const res = await runnerCall(s.url, tok, "/hello", { protocol: 999, version: "0.0.1", labels: [], capabilities: { browser: false } });
    expect(res.status).toBe(409);
    const body = await res.json();
    expect(body.error).toBe("conflict");
    expect(body.message).toContain("incompatible runner");
    expect(body.message).toContain("protocol 999");
    // A bad token is a 401 in the API's shape; a malformed body a 400 naming the field.
    const bad = await runnerCall(s.url, "svcr_nope", "/hello", {});
    expect(bad.status).toBe(401);
    expect((await bad.json()).error).toBe("unauthorized");
    const malformed = await runnerCall(s.url, tok, "/hello", { protocol: 1, version: "x", capabilities: {} });
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).details[0].path).toBe("body.capabilities.browser");
  });

  test("a workspace runner never claims another workspace's run, and so never receives its secrets", async () => {
    const other = await s.userWithKey("owner@other.test", "other", "owner");
    const otherProject = await json<{ slug: string }>(await s.call("POST", "/projects", { name: "other-remote" }, other.key), 201);
    await s.call("POST", `/projects/${otherProject.slug}/environments`, { name: "test", variables: { BASE_URL: target.url } }, other.key);
    const acmeRun = await startRun(
      s,
      project,
      await createAutomation(s, project, http([{ request: { url: "/items/1", headers: { "x-token": "{{API_TOKEN}}" } } }])),
    );
    const otherToken = await token("other-box", [], other.key);
    // Its claim, with only acme's run queued, is empty.
    expect((await runnerCall(s.url, otherToken, "/hello", { protocol: 1, version: "t", labels: [], capabilities: { browser: false } })).status).toBe(200);
    const claimed = await json<{ jobs: unknown[] }>(await runnerCall(s.url, otherToken, "/claim", { slots: 5, wait_ms: 0 }));
    expect(claimed.jobs).toEqual([]);
    const r = runner(otherToken);
    const otherAuto = await json<{ id: string }>(
      await s.call("POST", `/projects/${otherProject.slug}/automations`, http([{ request: { url: "/items/2" } }]), other.key),
      201,
    );
    const otherRun = await json<{ id: string }>(await s.call("POST", `/projects/${otherProject.slug}/automations/${otherAuto.id}/run`, {}, other.key), 202);
    expect(await waitUntilAsync(async () => (await holder(otherRun.id))?.status === "passed", 20_000)).toBe(true);
    expect((await holder(acmeRun))?.status).toBe("queued");
    expect(r.output()).not.toContain("acme-secret-value-1234");
    await r.stop("SIGKILL");
    // Nobody else holds it: cancel it so that the other tests' runners do not take it.
    await s.call("POST", `/projects/${project}/runs/${acmeRun}/cancel`);
  }, 40_000);

  test("an environment's runner_labels route its runs to runners having them all", async () => {
    await s.call("POST", `/projects/${project}/environments`, { name: "eu", variables: { BASE_URL: target.url }, runner_labels: ["eu", "fast"] });
    const auto = await createAutomation(s, project, http([{ request: { url: "/items/1" } }], { environment: "eu" }));
    const runId = await startRun(s, project, auto);
    // A runner with only one of the labels claims nothing.
    const half = await token("half", ["eu"]);
    await runnerCall(s.url, half, "/hello", { protocol: 1, version: "t", labels: [], capabilities: { browser: false } });
    expect((await json<{ jobs: unknown[] }>(await runnerCall(s.url, half, "/claim", { slots: 5, wait_ms: 0 }))).jobs).toEqual([]);
    // Its token's label and one it advertises (--labels) make both.
    const r = runner(await token("full", ["eu"]), ["--labels", "fast"]);
    const run = await waitForRun(s, project, runId, 20_000);
    expect(run.status).toBe("passed");
    await r.stop("SIGKILL");
  }, 40_000);

  test("a step a runner executes never reaches the instance metadata of the runner's machine", async () => {
    const r = runner(await token("cloud-box"));
    const url = "http://169.254.169.254/latest/api/token";
    const auto = await createAutomation(s, project, http([{ request: { method: "PUT", url, headers: { "X-aws-ec2-metadata-token-ttl-seconds": "21600" } } }]));
    const run = await waitForRun(s, project, await startRun(s, project, auto), 20_000);
    expect(run.runner?.name).toBe("cloud-box");
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toBe(
      `svc will not request ${url}: 169.254.169.254 is in the cloud's instance metadata range (link-local), which hands out the credentials of the machine svc runs on`,
    );
    expect(run.steps[0]?.response).toBeUndefined();
    await r.stop("SIGKILL");
  }, 40_000);

  test("cancel_run on a run a remote runner executes: the runner stops it within 1 s", async () => {
    const r = runner(await token("cancel-box"));
    const runId = await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/hold/remote-cancel" } }])));
    expect(await waitUntil(() => target.held("remote-cancel").length === 1, 20_000)).toBe(true);
    const t0 = Date.now();
    expect((await s.call("POST", `/projects/${project}/runs/${runId}/cancel`)).status).toBe(200);
    expect(await r.waitFor(`"run_id":"${runId}","status":"cancelled"`, 5_000)).toBe(true);
    // When the runner had stopped the run, by its own log line (same clock; the pipe's delay not counted).
    const line = r
      .output()
      .split("\n")
      .find((l) => l.includes(`"run_id":"${runId}","status":"cancelled"`));
    const stoppedAt = Date.parse((JSON.parse(String(line)) as { time: string }).time);
    expect(stoppedAt - t0).toBeLessThan(1000);
    expect((await getRun(s, project, runId)).status).toBe("cancelled");
    target.release("remote-cancel");
    await r.stop("SIGKILL");
  }, 40_000);

  test("a runner whose token is revoked while it runs stops its run at once and exits 3, saying why", async () => {
    const made = await json<{ id: string; token: string }>(await s.call("POST", "/runners", { name: "revoked-box", labels: [] }), 201);
    const r = runner(made.token);
    const runId = await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/hold/remote-revoked" } }])));
    expect(await waitUntil(() => target.held("remote-revoked").length === 1, 20_000)).toBe(true);
    const t0 = performance.now();
    expect((await s.call("DELETE", `/runners/${made.id}`)).status).toBe(204);
    // Its next heartbeat (a third of the lease) is refused: it stops without waiting for its claim's long poll.
    expect(await r.proc.exited).toBe(3);
    expect(performance.now() - t0).toBeLessThan(LEASE_MS + 3_000);
    expect(r.output()).toContain("no longer accepts the runner token");
    expect(r.output()).not.toContain(made.token);
    // What it held ends as its lease expires: never left running.
    expect(await waitUntilAsync(async () => (await holder(runId))?.status === "error", LEASE_MS + 5_000)).toBe(true);
    expect((await getRun(s, project, runId)).error).toContain("runner lost");
    target.release("remote-revoked");
  }, 40_000);

  test('a runner killed mid-run: its begun run ends error "runner lost" within the lease; one claimed but not begun is queued again and run by another runner', async () => {
    const killed = runner(await token("doomed"), ["--concurrency", "1"]);
    const begun = await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/hold/remote-lost" } }])));
    expect(await waitUntil(() => target.held("remote-lost").length === 1, 20_000)).toBe(true);
    // A second runner claims a run and dies before beginning it (it never says start, never heart-beats).
    const ghost = await token("ghost");
    await runnerCall(s.url, ghost, "/hello", { protocol: 1, version: "t", labels: [], capabilities: { browser: false } });
    const unbegun = await startRun(s, project, await createAutomation(s, project, http([{ request: { url: "/items/1" } }])));
    const claim = await json<{ jobs: { id: string }[] }>(await runnerCall(s.url, ghost, "/claim", { slots: 1, wait_ms: 5000 }));
    expect(claim.jobs.map((j) => j.id)).toEqual([unbegun]);

    killed.proc.kill("SIGKILL");
    await killed.proc.exited;
    const t0 = performance.now();
    expect(await waitUntilAsync(async () => (await holder(begun))?.status !== "running", LEASE_MS + 5_000)).toBe(true);
    // Within the lease, plus a generous margin for the sweep and a loaded machine.
    expect(performance.now() - t0).toBeLessThan(LEASE_MS + 3_000);
    const lost = await getRun(s, project, begun);
    expect(lost.status).toBe("error");
    expect(lost.error).toContain("runner lost");
    expect(await waitUntilAsync(async () => (await holder(unbegun))?.status === "queued", LEASE_MS + 5_000)).toBe(true);

    const rescuer = runner(await token("rescuer"));
    expect((await waitForRun(s, project, unbegun, 20_000)).status).toBe("passed");
    // The run it lost was never begun again.
    target.release("remote-lost");
    expect(target.held("remote-lost").length).toBe(1);
    expect((await holder(begun))?.status).toBe("error");
    await rescuer.stop("SIGKILL");
  }, 60_000);
});
