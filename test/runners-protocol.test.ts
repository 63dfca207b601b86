// The runner protocol itself, played by the test: finishing is fenced by the claim and the runner, artifacts are
// kept for the run's holder only, browser runs go only to runners that can run a browser, unbegun runs go back
// on release, a lost run is retried per the automation's retries; and the server's own engine never takes a run
// whose environment requires runner labels.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { runnerCall, startRunnerProcess } from "./helpers/remote-runner";
import { createAutomation, getRun, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { databaseEnv, startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntilAsync } from "./helpers/wait";

const LEASE_MS = 1000;
let s: TestServer;
let target: TargetApp;
let project: string;

const auto = (kind: "http" | "browser", steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `a-${crypto.randomUUID().slice(0, 8)}`,
  kind,
  environment: "test",
  steps,
  ...extra,
});

async function helloRunner(name: string, browser = false): Promise<string> {
  const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name }), 201);
  expect((await runnerCall(s.url, token, "/hello", { protocol: 1, version: "test", labels: [], capabilities: { browser } })).status).toBe(200);
  return token;
}

type Job = { id: string; claim: number; environment: { secrets: Record<string, string> } | null };
const claim = async (token: string) => (await json<{ jobs: Job[] }>(await runnerCall(s.url, token, "/claim", { slots: 5, wait_ms: 0 }))).jobs;
const status = async (runId: string) => (await s.sql<{ status: string }>("SELECT status FROM runs WHERE id = ?", runId))[0]?.status;

const passed = {
  status: "passed",
  error: null,
  summary: { steps: 1, passed: 1, failed: 0, skipped: 0 },
  steps: [{ index: 0, name: "shot", status: "passed", duration_ms: 1, message: null, artifacts: ["01-shot.png"] }],
  artifacts: ["01-shot.png"],
  attempts: [{ attempt: 1, status: "passed", error: null, message: null, duration_ms: 1 }],
};

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false, lease_ms: LEASE_MS } });
  ({ project } = await projectWithEnv(s, "protocol", { BASE_URL: target.url }, { API_TOKEN: "protocol-secret-1234" }));
}, 60_000);
afterAll(async () => {
  await s.stop();
  await target.stop();
});

describe("the runner protocol", () => {
  test("only the holder finishes a run under its claim; its artifacts are kept and served; oversize and foreign uploads are refused", async () => {
    const a = await helloRunner("holder");
    const b = await helloRunner("intruder");
    const runId = await startRun(s, project, await createAutomation(s, project, auto("http", [{ request: { url: "/items/1" } }])));
    const [job] = await claim(a);
    expect(job?.id).toBe(runId);
    expect(job?.environment?.secrets.API_TOKEN).toBe("protocol-secret-1234");
    const c = Number(job?.claim);
    expect((await json<{ started: unknown[] }>(await runnerCall(s.url, a, "/start", { runs: [{ id: runId, claim: c }] }))).started.length).toBe(1);

    const put = (token: string, claimNo: number, body: Uint8Array, name = "01-shot.png") =>
      fetch(`${s.url}/api/v1/runner/runs/${runId}/artifacts/${name}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "x-svc-claim": String(claimNo), "content-type": "application/octet-stream" },
        body: new Blob([body as Uint8Array<ArrayBuffer>]),
      });
    expect((await put(b, c, new Uint8Array([1]))).status).toBe(404);
    expect((await put(a, c + 1, new Uint8Array([1]))).status).toBe(404);
    expect((await put(a, c, new Uint8Array([1]), "..%2Fescape")).status).toBe(400);
    expect((await put(a, c, new Uint8Array(32 * 1024 * 1024 + 1))).status).toBe(413);
    // Runs keep screenshots only: a page (here XHTML with a script) served from svc's origin would run in the viewer's session.
    const page = new TextEncoder().encode('<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(document.cookie)</script></html>');
    for (const [name, body] of [
      ["report.xml", page],
      ["report.html", page],
      ["fake.png", page],
    ] as const) {
      const refused = await put(a, c, body, name);
      expect({ name, status: refused.status }).toEqual({ name, status: 400 });
      expect(((await refused.json()) as { message: string }).message).toContain("a run keeps screenshots only");
    }
    const png = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13]);
    expect((await put(a, c, png)).status).toBe(200);

    const finish = (token: string, claimNo: number) => runnerCall(s.url, token, "/finish", { runs: [{ id: runId, claim: claimNo, result: passed }] });
    expect((await json<{ recorded: string[] }>(await finish(b, c))).recorded).toEqual([]);
    expect((await json<{ recorded: string[] }>(await finish(a, c + 1))).recorded).toEqual([]);
    expect(await status(runId)).toBe("running");
    expect((await json<{ recorded: string[] }>(await finish(a, c))).recorded).toEqual([runId]);
    const run = await getRun(s, project, runId);
    expect(run.status).toBe("passed");
    const shot = await s.call("GET", `/projects/${project}/runs/${runId}/artifacts/01-shot.png`);
    expect(shot.status).toBe(200);
    expect(shot.headers.get("content-type")).toBe("image/png");
    expect(shot.headers.get("content-security-policy")).toContain("sandbox");
    expect(new Uint8Array(await shot.arrayBuffer())).toEqual(png);
    expect(await s.sql("SELECT name FROM run_artifacts WHERE run_id = ?", runId)).toEqual([{ name: "01-shot.png" }]);
  });

  test("browser runs go only to runners that can run a browser; a released run goes back to the queue", async () => {
    const noBrowser = await helloRunner("headless-box", false);
    const withBrowser = await helloRunner("browser-box", true);
    const runId = await startRun(s, project, await createAutomation(s, project, auto("browser", [{ goto: "/items-page" }])));
    expect(await claim(noBrowser)).toEqual([]);
    const [job] = await claim(withBrowser);
    expect(job?.id).toBe(runId);
    expect(await status(runId)).toBe("running");
    const released = await json<{ released: string[] }>(await runnerCall(s.url, withBrowser, "/release", { runs: [{ id: runId, claim: job?.claim }] }));
    expect(released.released).toEqual([runId]);
    expect(await status(runId)).toBe("queued");
    await s.call("POST", `/projects/${project}/runs/${runId}/cancel`);
  });

  test("a run lost mid-run is queued again while the automation's retries allow, then ends error; a late finish is not taken", async () => {
    const r = await helloRunner("flaky-box");
    const runId = await startRun(s, project, await createAutomation(s, project, auto("http", [{ request: { url: "/items/1" } }], { retries: 1 })));
    const [first] = await claim(r);
    await runnerCall(s.url, r, "/start", { runs: [{ id: runId, claim: first?.claim }] });
    // No heartbeat: the lease expires and the retry queues it again.
    expect(await waitUntilAsync(async () => (await status(runId)) === "queued", LEASE_MS * 5)).toBe(true);
    // The lost attempt is kept, and goes with the run to its next runner.
    const requeued = await getRun(s, project, runId);
    expect(requeued.attempts.map((a) => [a.attempt, a.status])).toEqual([[1, "error"]]);
    expect(requeued.attempts[0]?.message).toContain('runner lost: runner "flaky-box" stopped heart-beating');
    const [second] = (await claim(r)) as (Job & { prior_attempts?: { attempt: number; status: string }[] })[];
    expect(second?.claim).toBeGreaterThan(Number(first?.claim));
    expect(second?.prior_attempts?.map((a) => [a.attempt, a.status])).toEqual([[1, "error"]]);
    await runnerCall(s.url, r, "/start", { runs: [{ id: runId, claim: second?.claim }] });
    // A client waiting on the run hears its end like any other: the read held by ?wait= answers with the error.
    const waited = s.call("GET", `/projects/${project}/runs/${runId}?wait=30`);
    expect(await waitUntilAsync(async () => (await status(runId)) === "error", LEASE_MS * 5)).toBe(true);
    const heard = (await (await waited).json()) as { status: string; error: string };
    expect(heard.status).toBe("error");
    expect(heard.error).toContain("runner lost");
    // Both losses are attempts of the run: its one retry was the second.
    const ended = await getRun(s, project, runId);
    expect(ended.attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, "error"],
      [2, "error"],
    ]);
    const late = await json<{ recorded: string[] }>(await runnerCall(s.url, r, "/finish", { runs: [{ id: runId, claim: second?.claim, result: passed }] }));
    expect(late.recorded).toEqual([]);
    expect(await status(runId)).toBe("error");
  });

  test("a run retried after its runner was lost goes on from its attempts on the next runner, within its retries", async () => {
    const lostBox = await helloRunner("lost-box");
    const key = crypto.randomUUID();
    const automation = auto("http", [{ request: { url: `/flaky/${key}?fail=5` }, expect: [{ status: 200 }] }], { retries: 2 });
    const runId = await startRun(s, project, await createAutomation(s, project, automation));
    const [job] = await claim(lostBox);
    await runnerCall(s.url, lostBox, "/start", { runs: [{ id: runId, claim: job?.claim }] });
    expect(await waitUntilAsync(async () => (await status(runId)) === "queued", LEASE_MS * 5)).toBe(true);
    // A real runner takes it: two attempts are left of the three its retries allow, numbered on from the lost one.
    const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name: "next-box" }), 201);
    const next = startRunnerProcess(s.url, token);
    try {
      const run = await waitForRun(s, project, runId, 20_000);
      expect(run.status).toBe("failed");
      expect(run.attempts.map((a) => [a.attempt, a.status])).toEqual([
        [1, "error"],
        [2, "failed"],
        [3, "failed"],
      ]);
      expect(run.attempts[0]?.message).toContain("runner lost");
      expect(run.attempts[2]?.message).toContain("status: expected 200, got 500");
      // The target was called twice: the lost attempt never reached it, and no attempt beyond the retries was made.
      expect(run.steps[0]?.response?.body).toContain('"call":2');
    } finally {
      await next.stop();
    }
  }, 30_000);

  test("a runner that goes away while its claim waits gets nothing claimed behind its back", async () => {
    const gone = await helloRunner("gone-box");
    const stays = await helloRunner("stays-box");
    await s.sql("UPDATE runners SET last_seen_at = NULL WHERE name = 'gone-box'");
    const abort = new AbortController();
    const waiting = fetch(`${s.url}/api/v1/runner/claim`, {
      method: "POST",
      headers: { authorization: `Bearer ${gone}`, "content-type": "application/json" },
      body: JSON.stringify({ slots: 1, wait_ms: 20_000 }),
      signal: abort.signal,
    }).catch(() => null);
    // A claim marks its runner seen before it waits: once seen, the claim is waiting.
    const lastSeen = async () => (await s.sql<{ last_seen_at: string | null }>("SELECT last_seen_at FROM runners WHERE name = ?", "gone-box"))[0]?.last_seen_at;
    expect(await waitUntilAsync(async () => (await lastSeen()) != null, 5_000)).toBe(true);
    abort.abort();
    await waiting;
    const runId = await startRun(s, project, await createAutomation(s, project, auto("http", [{ request: { url: "/items/1" } }])));
    const [job] = await claim(stays);
    // Its first claim: no claim of the runner that went away came before.
    expect(job).toMatchObject({ id: runId, claim: 1 });
    await s.call("POST", `/projects/${project}/runs/${runId}/cancel`);
  });

  test("a heartbeat answers at once when one of the runner's runs is cancelled", async () => {
    const r = await helloRunner("beating-box");
    const runId = await startRun(s, project, await createAutomation(s, project, auto("http", [{ request: { url: "/items/1" } }])));
    const [job] = await claim(r);
    await runnerCall(s.url, r, "/start", { runs: [{ id: runId, claim: job?.claim }] });
    const beat = runnerCall(s.url, r, "/heartbeat", { runs: [{ id: runId, claim: job?.claim }], wait_ms: 20_000 });
    await s.call("POST", `/projects/${project}/runs/${runId}/cancel`);
    const answer = await json<{ cancelled: string[]; lost: string[] }>(await beat);
    expect(answer.cancelled).toEqual([runId]);
  });
});

describe("a runner's claims", () => {
  test("go in turns as the server's own do: round-robin across workspaces, then projects, then oldest first", async () => {
    const fair = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
    try {
      const beta = await fair.userWithKey("owner@beta.test", "beta");
      const { project: first } = await projectWithEnv(fair, "first", { BASE_URL: target.url });
      const { project: second } = await projectWithEnv(fair, "second", { BASE_URL: target.url });
      const third = (await json<{ slug: string }>(await fair.call("POST", "/projects", { name: "third" }, beta.key), 201)).slug;
      await json(await fair.call("POST", `/projects/${third}/environments`, { name: "test", variables: { BASE_URL: target.url } }, beta.key), 201);
      const queue = async (project: string, key = fair.key) => {
        const body = auto("http", [{ request: { url: "/items/1" } }]);
        const a = await json<{ id: string }>(await fair.call("POST", `/projects/${project}/automations`, body, key), 201);
        return (await json<{ id: string }>(await fair.call("POST", `/projects/${project}/automations/${a.id}/run`, {}, key), 202)).id;
      };
      // Oldest first: acme's project "first" has three runs queued before anyone else's.
      const [b1, b2, b3] = [await queue(first), await queue(first), await queue(first)];
      const other = await queue(second);
      const betas = await queue(third, beta.key);
      // A server-wide runner (it may take every workspace's runs).
      const made = Bun.spawn(
        [process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "admin", "create-runner-token", "--name", "fair", "--data-dir", fair.dataDir],
        {
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: fair.dataDir, ...(await databaseEnv(fair.dataDir)) },
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const token = (await new Response(made.stdout).text()).trim();
      expect(await made.exited).toBe(0);
      expect((await runnerCall(fair.url, token, "/hello", { protocol: 1, version: "test", labels: [], capabilities: { browser: false } })).status).toBe(200);
      const take = async (slots: number) =>
        (await json<{ jobs: Job[] }>(await runnerCall(fair.url, token, "/claim", { slots, wait_ms: 0 }))).jobs.map((j) => j.id).sort();
      // One of beta's, one of each acme project: not the three oldest.
      expect(await take(3)).toEqual([b1, other, betas].sort());
      expect(await take(5)).toEqual([b2, b3].sort());
    } finally {
      await fair.stop();
    }
  }, 60_000);
});

describe("the server's own engine", () => {
  test("never takes a run whose environment requires runner labels", async () => {
    const local = await startTestServer({ rate_limit: { enabled: false } });
    try {
      const { project: p } = await projectWithEnv(local, "local-labels", { BASE_URL: target.url });
      await local.call("POST", `/projects/${p}/environments`, { name: "eu", variables: { BASE_URL: target.url }, runner_labels: ["eu"] });
      const labelled = await startRun(local, p, await createAutomation(local, p, auto("http", [{ request: { url: "/items/1" } }], { environment: "eu" })));
      const plain = await startRun(local, p, await createAutomation(local, p, auto("http", [{ request: { url: "/items/1" } }])));
      // Claims go oldest first: the later run finishing shows the earlier one was passed over.
      expect((await waitForRun(local, p, plain)).status).toBe("passed");
      expect((await getRun(local, p, labelled)).status).toBe("queued");
    } finally {
      await local.stop();
    }
  });
});

describe("a server restart", () => {
  test("leaves the runs remote runners hold running under their leases (only its own engine's runs were interrupted)", async () => {
    const dataDir = tempDir();
    const first = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false }, runner: { local: false } });
    let runId = "";
    let job: Job | undefined;
    let tok = "";
    try {
      const { project: p } = await projectWithEnv(first, "restart", { BASE_URL: target.url });
      tok = (await json<{ token: string }>(await first.call("POST", "/runners", { name: "survivor" }), 201)).token;
      await runnerCall(first.url, tok, "/hello", { protocol: 1, version: "t", labels: [], capabilities: { browser: false } });
      runId = await startRun(first, p, await createAutomation(first, p, auto("http", [{ request: { url: "/items/1" } }])));
      [job] = (await json<{ jobs: Job[] }>(await runnerCall(first.url, tok, "/claim", { slots: 1, wait_ms: 0 }))).jobs;
      await runnerCall(first.url, tok, "/start", { runs: [{ id: runId, claim: job?.claim }] });
    } finally {
      await first.server.stop();
    }
    const again = await startServer(
      loadConfig({
        env: await databaseEnv(dataDir),
        flags: { port: 0, data_dir: dataDir, log_level: "warn", "rate_limit.enabled": false, "runner.local": false },
      }),
    );
    try {
      const stored = async () => (await first.sql<{ status: string }>("SELECT status FROM runs WHERE id = ?", runId))[0]?.status;
      expect(await stored()).toBe("running");
      const done = await json<{ recorded: string[] }>(
        await runnerCall(again.url, tok, "/finish", { runs: [{ id: runId, claim: job?.claim, result: { ...passed, steps: [], artifacts: [] } }] }),
      );
      expect(done.recorded).toEqual([runId]);
      expect(await stored()).toBe("passed");
    } finally {
      await again.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

test("svc runner --name (SVC_RUNNER_NAME) names the runner at its hello: the API lists it by that name; a name with control characters is a 400", async () => {
  const { id, token } = await json<{ id: string; token: string }>(await s.call("POST", "/runners", { name: "token-name" }), 201);
  const hello = (name: string) => runnerCall(s.url, token, "/hello", { protocol: 1, version: "test", name, labels: [], capabilities: { browser: false } });
  expect((await hello("edge-b")).status).toBe(200);
  expect((await json<{ name: string }>(await s.call("GET", `/runners/${id}`))).name).toBe("edge-b");
  expect((await s.call("GET", "/runners/edge-b")).status).toBe(200);
  const bad = await hello("edge\u001b[2J");
  expect(bad.status).toBe(400);
  expect((await json<{ name: string }>(await s.call("GET", `/runners/${id}`))).name).toBe("edge-b");
});
