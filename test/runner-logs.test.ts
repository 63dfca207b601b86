// Secrets stay out of the server's log as they stay out of run results: `svc serve` (the compiled executable)
// logs every finished run with its error, and an error built from a secret shows *** there, in every encoding
// the secret can take in a URL.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { apiClient, runBinary, startServe, type ServeProcess } from "./helpers/binary";
import { tempDir } from "./helpers/server";

let dir: string;
let serve: ServeProcess;
let key: string;
let deadPort: number;

const TOKEN = "tok-LOG-7f3a9c41";
// Characters a URL encodes differently from encodeURIComponent (space as +, ! ~ ' kept or escaped, @ kept).
const PASS = "p@ss word!~'x";

/** Every way a secret can be written in what a run records or logs. */
function forms(secret: string): string[] {
  const u = new URL("http://example.test/");
  u.pathname = `/${secret}`;
  const path = u.pathname.slice(1);
  u.search = `?${secret}`;
  return [
    ...new Set([
      secret,
      encodeURIComponent(secret),
      new URLSearchParams({ q: secret }).toString().slice(2),
      path,
      u.search.slice(1),
      JSON.stringify(secret).slice(1, -1),
    ]),
  ];
}

const call = <T>(method: string, path: string, body?: unknown, status = 200): Promise<T> => apiClient(serve.url, key)<T>(method, path, body, status);

type Run = { id: string; status: string; error: string | null; steps: { request?: { url: string } }[] };

async function runToEnd(steps: unknown[]): Promise<Run> {
  const a = await call<{ id: string }>(
    "POST",
    "/projects/logs/automations",
    { name: `a-${crypto.randomUUID().slice(0, 8)}`, kind: "http", environment: "local", steps },
    201,
  );
  const queued = await call<{ id: string }>("POST", `/projects/logs/automations/${a.id}/run`, {}, 202);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await call<Run>("GET", `/projects/logs/runs/${queued.id}`);
    if (!["queued", "running"].includes(r.status)) return r;
    if (Date.now() > deadline) throw new Error(`run ${r.id} still ${r.status}`);
    await Bun.sleep(25);
  }
}

type LogLine = { msg: string; level: string; run_id?: string; status?: string; error?: string };

/** The log's JSON lines about a run; waits for the "run finished" one (log lines are written in batches). */
async function runLines(runId: string): Promise<LogLine[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = serve
      .logs()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as LogLine)
      .filter((l) => l.run_id === runId);
    if (lines.some((l) => l.msg === "run finished") || Date.now() > deadline) return lines;
    await Bun.sleep(25);
  }
}

beforeAll(async () => {
  dir = tempDir("svc-runner-logs-");
  const dataDir = join(dir, "data");
  const env = { HOME: dir };
  const user = await runBinary(["admin", "create-user", "--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme", "--data-dir", dataDir], { env });
  if (user.code !== 0) throw new Error(user.stderr);
  const k = await runBinary(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--data-dir", dataDir], { env });
  if (k.code !== 0) throw new Error(k.stderr);
  key = k.stdout.trim();
  // Info level (the default) is where runs are logged.
  serve = await startServe(["--data-dir", dataDir], { cwd: dir, env: { ...env, SVC_RATE_LIMIT_ENABLED: "false", SVC_LOG_LEVEL: "info" } });
  const dead = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  deadPort = dead.port as number;
  await dead.stop(true);
  await call("POST", "/projects", { name: "logs", slug: "logs" }, 201);
  await call("POST", "/projects/logs/environments", { name: "local", variables: { BASE_URL: `http://127.0.0.1:${deadPort}` }, secrets: { TOKEN, PASS } }, 201);
});
afterAll(async () => {
  if (serve) await serve.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

test("a run whose error contains secrets is logged with *** and never with the secret, in any encoding", async () => {
  const runs = [
    // The secret in a URL the run cannot reach: the error repeats the URL.
    await runToEnd([{ request: { url: `http://127.0.0.1:${deadPort}/login?token={{TOKEN}}` } }]),
    // In a form-encoded query value (space as +) and in a normalised path.
    await runToEnd([{ request: { url: "/search", query: { q: "{{PASS}}", t: "{{TOKEN}}" } } }]),
    await runToEnd([{ request: { url: "/users/{{PASS}}/{{TOKEN}}", query: { page: 1 } } }]),
  ];
  for (const run of runs) {
    expect(run.status).toBe("error");
    expect(run.error).toContain("could not reach GET");
    expect(run.error).toContain("***");
    const lines = await runLines(run.id);
    const finished = lines.find((l) => l.msg === "run finished");
    expect(finished).toMatchObject({ level: "info", status: "error" });
    // The log says what the results say, masked the same way.
    expect(finished?.error).toBe(run.error ?? "");
  }
  expect(runs[1]?.steps[0]?.request?.url).toBe(`http://127.0.0.1:${deadPort}/search?q=***&t=***`);
  expect(runs[2]?.steps[0]?.request?.url).toBe(`http://127.0.0.1:${deadPort}/users/***/***?page=1`);

  const log = serve.logs();
  const results = JSON.stringify(await Promise.all(runs.map((r) => call<Run>("GET", `/projects/logs/runs/${r.id}`))));
  for (const secret of [TOKEN, PASS]) {
    for (const form of forms(secret)) {
      expect({ form, inLog: log.includes(form), inResults: results.includes(form) }).toEqual({ form, inLog: false, inResults: false });
    }
  }
}, 60_000);

test("a failed run is logged with its first failed step, secrets masked there too", async () => {
  const target = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ ok: false }, { status: 500 }) });
  try {
    const run = await runToEnd([
      {
        name: "health",
        request: { url: `http://127.0.0.1:${target.port}/health?token={{TOKEN}}` },
        expect: [{ status: 200 }, { json: "$.ok", equals: "{{TOKEN}}" }],
      },
    ]);
    expect(run.status).toBe("failed");
    expect(run.error).toBeNull();
    const finished = (await runLines(run.id)).find((l) => l.msg === "run finished") as LogLine & { failure?: string };
    expect(finished).toMatchObject({ level: "info", status: "failed" });
    expect(finished.failure).toStartWith("step 1 (health): ");
    expect(finished.failure).toContain("expected 200, got 500");
    expect(finished.failure).not.toContain(TOKEN);
  } finally {
    target.stop(true);
  }
  for (const form of forms(TOKEN)) expect(serve.logs().includes(form)).toBe(false);
}, 60_000);
