// The run engine inside the compiled executable: a browser run (playwright-core bundled, no node_modules beside
// the binary), restart recovery after kill -9, SIGTERM letting a running run finish, and `svc runner` executing a
// server's runs in its worker processes, which go with it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { apiClient, copyBinary, requireBinary } from "./helpers/binary";
import { tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

let target: TargetApp;
let dir: string;
let binary: string;
let key: string;

interface Serve {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  logs(): string;
}

/** `svc serve` from a copy of the binary in a directory with no node_modules anywhere above it. */
async function serve(env: Record<string, string> = {}): Promise<Serve> {
  const proc = Bun.spawn([binary, "serve", "--port", "0", "--data-dir", join(dir, "data")], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SVC_RATE_LIMIT_ENABLED: "false", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let buffer = "";
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + 15_000;
  let url: string | null = null;
  while (!url) {
    const { value, done } = await reader.read();
    if (done || Date.now() > deadline) throw new Error(`svc serve did not start: ${buffer}`);
    buffer += decoder.decode(value);
    url = /svc listening on (\S+)/.exec(buffer)?.[1] ?? null;
  }
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value);
    }
  })().catch(() => undefined);
  return { url, proc, logs: () => buffer };
}

async function admin(args: string[], stdin?: string): Promise<string> {
  const p = Bun.spawn([binary, "admin", ...args, "--data-dir", join(dir, "data")], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
    stdin: stdin ? new TextEncoder().encode(stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`svc admin ${args[0]} failed: ${err}`);
  return out;
}

const api = (s: Serve) => apiClient(s.url, key);

type Run = { id: string; status: string; error: string | null; steps: { status: string; message: string | null }[]; artifacts: string[] };

async function waitFor(call: ReturnType<typeof api>, path: string, until: (r: Run) => boolean, ms = 30_000): Promise<Run> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await call<Run>("GET", path);
    if (until(r)) return r;
    if (Date.now() > deadline) throw new Error(`${path} stayed ${r.status}`);
    await Bun.sleep(30);
  }
}

const done = (r: Run) => !["queued", "running"].includes(r.status);

beforeAll(async () => {
  requireBinary();
  target = startTargetApp();
  dir = tempDir("svc-runner-bin-");
  binary = copyBinary(dir);
  await admin(["create-user", "--email", "ci@acme.test", "--name", "CI", "--workspace", "acme"]);
  key = (await admin(["create-key", "--email", "ci@acme.test", "--workspace", "acme"])).trim();
});
afterAll(async () => {
  await target.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("a browser run through the compiled binary drives Chromium and serves its screenshot", async () => {
  const s = await serve();
  try {
    const call = api(s);
    await call("POST", "/projects", { name: "bin", slug: "bin" }, 201);
    await call("POST", "/projects/bin/environments", { name: "local", variables: { BASE_URL: target.url } }, 201);
    const a = await call<{ id: string }>(
      "POST",
      "/projects/bin/automations",
      {
        name: "list page",
        kind: "browser",
        environment: "local",
        steps: [{ goto: "/items-page" }, { expect: { count: { locator: "testid=item", equals: 3 } } }, { screenshot: "list" }],
      },
      201,
    );
    const queued = await call<{ id: string }>("POST", `/projects/bin/automations/${a.id}/run`, {}, 202);
    const run = await waitFor(call, `/projects/bin/runs/${queued.id}`, done, 60_000);
    expect(run.steps.map((x) => x.message).filter((m) => m && !m.startsWith("HTTP "))).toEqual([]);
    expect(run.status).toBe("passed");
    const shot = await fetch(`${s.url}/api/v1/ops/projects/bin/runs/${run.id}/artifacts/03-list.png`, { headers: { authorization: `Bearer ${key}` } });
    expect(shot.status).toBe(200);
    expect((await shot.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  } finally {
    s.proc.kill("SIGKILL");
    await s.proc.exited;
  }
}, 90_000);

test("after kill -9, the next start finishes the interrupted run as error and nothing stays running", async () => {
  const first = await serve();
  const call = api(first);
  const a = await call<{ id: string }>(
    "POST",
    "/projects/bin/automations",
    {
      name: "long",
      kind: "http",
      environment: "local",
      timeout_ms: 120_000,
      steps: [{ request: { url: "/items/1" } }, { request: { url: "/slow?ms=60000", timeout_ms: 90_000 } }],
    },
    201,
  );
  const queued = await call<{ id: string }>("POST", `/projects/bin/automations/${a.id}/run`, {}, 202);
  // A long run shows the steps it has done while it runs.
  const midway = await waitFor(call, `/projects/bin/runs/${queued.id}`, (r) => r.steps.length > 0, 10_000);
  expect(midway.status).toBe("running");
  first.proc.kill("SIGKILL");
  await first.proc.exited;

  const second = await serve();
  try {
    const call2 = api(second);
    const run = await call2<Run>("GET", `/projects/bin/runs/${queued.id}`);
    expect(run.status).toBe("error");
    expect(run.error).toBe("interrupted by server restart");
    expect(run.steps[0]?.status).toBe("passed");
    const running = await call2<{ data: unknown[] }>("GET", "/projects/bin/runs?status=running");
    expect(running.data).toEqual([]);
    const automation = await call2<{ last_run: { status: string } }>("GET", `/projects/bin/automations/${a.id}`);
    expect(automation.last_run.status).toBe("error");
  } finally {
    second.proc.kill("SIGKILL");
    await second.proc.exited;
  }
}, 90_000);

test("SIGTERM lets a running run finish before the process exits", async () => {
  const s = await serve();
  const call = api(s);
  const a = await call<{ id: string }>(
    "POST",
    "/projects/bin/automations",
    {
      name: "short",
      kind: "http",
      environment: "local",
      steps: [{ request: { url: "/slow?ms=1500" }, expect: [{ json: "$.slow", equals: true }, { schema: { type: "object", required: ["slow"] } }] }],
    },
    201,
  );
  const queued = await call<{ id: string }>("POST", `/projects/bin/automations/${a.id}/run`, {}, 202);
  await waitFor(call, `/projects/bin/runs/${queued.id}`, (r) => r.status === "running");
  const t0 = Date.now();
  s.proc.kill("SIGTERM");
  expect(await s.proc.exited).toBe(0);
  expect(Date.now() - t0).toBeGreaterThan(500);

  const again = await serve();
  try {
    const run = await api(again)<Run>("GET", `/projects/bin/runs/${queued.id}`);
    expect(run.status).toBe("passed");
  } finally {
    again.proc.kill("SIGKILL");
    await again.proc.exited;
  }
}, 90_000);

/** The processes below `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {}
  }
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0) {
    for (const c of children.get(todo.pop() as number) ?? []) {
      out.push(c);
      todo.push(c);
    }
  }
  return out;
}

/** Whether a process still runs (a zombie waiting to be reaped runs nothing). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

test("svc runner from the compiled binary executes a server's http run; on SIGTERM its worker processes go with it", async () => {
  const s = await serve({ SVC_RUNNER_LOCAL: "false" });
  let runner: Subprocess<"ignore", "pipe", "pipe"> | null = null;
  try {
    const call = api(s);
    await call("POST", "/projects", { name: "remote", slug: "remote" }, 201);
    await call("POST", "/projects/remote/environments", { name: "local", variables: { BASE_URL: target.url } }, 201);
    const a = await call<{ id: string }>(
      "POST",
      "/projects/remote/automations",
      { name: "item", kind: "http", environment: "local", steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }, { json: "$.id", equals: 1 }] }] },
      201,
    );
    const token = (await admin(["create-runner-token", "--name", "bin-runner"])).trim();
    runner = Bun.spawn([binary, "runner", "--server", s.url], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, SVC_RUNNER_TOKEN: token, SVC_RUNNER_WORKERS: "2" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const queued = await call<{ id: string }>("POST", `/projects/remote/automations/${a.id}/run`, {}, 202);
    const run = await waitFor(call, `/projects/remote/runs/${queued.id}`, done, 60_000);
    expect(run.status).toBe("passed");
    const workers = descendants(runner.pid);
    expect(workers.length).toBeGreaterThanOrEqual(2);
    runner.kill("SIGTERM");
    expect(await runner.exited).toBe(0);
    // No orphans: every process the runner started is gone once it has exited.
    const deadline = Date.now() + 5_000;
    while (workers.some(alive) && Date.now() < deadline) await Bun.sleep(20);
    expect(workers.filter(alive)).toEqual([]);
  } finally {
    if (runner && runner.exitCode === null) runner.kill("SIGKILL");
    s.proc.kill("SIGKILL");
    await s.proc.exited;
  }
}, 90_000);
