// `svc healthcheck`, the container image's HEALTHCHECK, run as the compiled executable: a server is healthy while
// its /healthz answers 200 where it listens (over its own TLS too, which the former `curl http://…` check could not
// reach), a runner while it runs and has heard from its server within a minute; exit 0 or 1 and one line saying why.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBinary, startServe } from "./helpers/binary";
import { type RunnerProcess, startRunnerProcess } from "./helpers/remote-runner";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

let work: string;
beforeAll(() => {
  work = tempDir("svc-healthcheck-");
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `svc healthcheck` with only these variables (and PATH): HOME is where a runner here notes its health. */
const healthcheck = (args: string[], env: Record<string, string> = {}) =>
  runBinary(["healthcheck", ...args], { cwd: work, env: { HOME: join(work, "nobody-home"), XDG_RUNTIME_DIR: "", ...env } });

const portOf = (url: string) => new URL(url).port;

describe("a server", () => {
  test("over http: healthy while it serves, at the port SVC_PORT or --port names; unhealthy once it stopped", async () => {
    const s = await startServe(["--data-dir", join(work, "plain")], { cwd: work });
    try {
      const ok = await healthcheck([], { SVC_PORT: portOf(s.url) });
      expect(ok.stdout).toBe(`healthy: ${s.url}/healthz answers 200\n`);
      expect(ok.code).toBe(0);
      // The image listens on 0.0.0.0: the check asks the loopback address.
      const wildcard = await healthcheck(["--port", portOf(s.url)], { SVC_HOST: "0.0.0.0" });
      expect(wildcard.code).toBe(0);
    } finally {
      await s.stop();
    }
    const down = await healthcheck(["--port", portOf(s.url)]);
    expect(down.stderr).toBe(`unhealthy: ${s.url}/healthz: nothing listens there (connection refused)\n`);
    expect(down.code).toBe(1);
  }, 30_000);

  test("over its own TLS (a certificate no one here trusts): healthy", async () => {
    const r = Bun.spawnSync(
      ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=svc.internal", "-keyout", "tls.key", "-out", "tls.crt"],
      { cwd: work },
    );
    expect(r.exitCode).toBe(0);
    const config = join(work, "tls.toml");
    writeFileSync(config, `[tls]\ncert = "${join(work, "tls.crt")}"\nkey = "${join(work, "tls.key")}"\n`);
    const s = await startServe(["--config", config, "--data-dir", join(work, "tls")], { cwd: work });
    try {
      expect(s.url).toStartWith("https://");
      const ok = await healthcheck(["--config", config, "--port", portOf(s.url)]);
      expect(ok.stdout).toBe(`healthy: ${s.url}/healthz answers 200\n`);
      expect(ok.code).toBe(0);
      // What the image checked before: plain http to a TLS port fails.
      const curl = Bun.spawnSync(["curl", "-fsS", "--max-time", "5", `http://127.0.0.1:${portOf(s.url)}/healthz`]);
      expect(curl.exitCode).not.toBe(0);
    } finally {
      await s.stop();
    }
  }, 30_000);

  test("a /healthz that answers something else than 200 is unhealthy, and says what it answered", async () => {
    const other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("starting", { status: 503 }) });
    try {
      const r = await healthcheck(["--port", String(other.port)]);
      expect(r.stderr).toBe(`unhealthy: http://127.0.0.1:${other.port}/healthz answers 503\n`);
      expect(r.code).toBe(1);
    } finally {
      other.stop(true);
    }
  });
});

describe("a runner", () => {
  let s: TestServer;
  let runner: RunnerProcess | null = null;
  const home = () => join(work, "runner-home");
  const healthFile = () => join(home(), ".svc-runner-health.json");

  beforeAll(async () => {
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
  }, 60_000);
  afterAll(async () => {
    await runner?.stop("SIGKILL");
    await s.stop();
  });

  test("while it hears from its server it is healthy (found without --runner: it has no port); stopped, it is not", async () => {
    const token = (await json<{ token: string }>(await s.call("POST", "/runners", { name: "box", labels: [] }), 201)).token;
    runner = startRunnerProcess(s.url, token, [], { HOME: home() });
    expect(await runner.waitFor("runner connected")).toBe(true);
    expect(await waitUntil(() => existsSync(healthFile()), 10_000)).toBe(true);
    const written = JSON.parse(readFileSync(healthFile(), "utf8")) as { pid: number; server: string; contact_at: string };
    expect(written.pid).toBe(runner.proc.pid);
    expect(written.server).toBe(s.url);
    // Nothing a run or an operator should not see: no token.
    expect(readFileSync(healthFile(), "utf8")).not.toContain(token);

    const ok = await healthcheck([], { HOME: home() });
    expect(ok.stdout).toMatch(new RegExp(`^healthy: the runner \\(pid ${runner.proc.pid}\\) heard from ${s.url.replaceAll(".", "\\.")} \\d+ s ago\\n$`));
    expect(ok.code).toBe(0);
    // --server asks for the server on this machine instead: none listens on the image's port here.
    const server = await healthcheck(["--server", "--port", "1"], { HOME: home() });
    expect(server.code).toBe(1);

    expect(await runner.stop("SIGTERM")).toBe(0);
    // A runner that stopped takes its note with it.
    expect(existsSync(healthFile())).toBe(false);
    const gone = await healthcheck(["--runner"], { HOME: home() });
    expect(gone.stderr).toStartWith("unhealthy: no runner runs here");
    expect(gone.code).toBe(1);
  }, 60_000);

  test("a runner that has not heard from its server for over a minute is unhealthy; a note of a runner no longer running is ignored", async () => {
    const dir = join(work, "stale-home");
    const file = join(dir, ".svc-runner-health.json");
    mkdirSync(dir, { recursive: true });
    // A live process with a runner's argument, whose last contact was 75 s ago, as a runner whose server went away writes it.
    const sleeper = Bun.spawn(["sh", "-c", "sleep 30; true", "runner"]);
    try {
      writeFileSync(file, JSON.stringify({ pid: sleeper.pid, server: "https://svc.example.test", contact_at: new Date(Date.now() - 75_000).toISOString() }));
      const stale = await healthcheck([], { HOME: dir });
      expect(stale.stderr).toMatch(
        new RegExp(`^unhealthy: the runner \\(pid ${sleeper.pid}\\) has not heard from https://svc\\.example\\.test for 7[5-9] s: see its log\\n$`),
      );
      expect(stale.code).toBe(1);
      // XDG_RUNTIME_DIR, where set, holds the note instead of the home directory.
      const runtime = await healthcheck([], { HOME: join(work, "elsewhere"), XDG_RUNTIME_DIR: dir });
      expect(runtime.stderr).toContain(`the runner (pid ${sleeper.pid}) has not heard from`);
    } finally {
      sleeper.kill("SIGKILL");
      await sleeper.exited;
    }
    // Its process is gone: what runs here is not a runner, so the server is checked (none listens on port 1).
    const dead = await healthcheck(["--port", "1"], { HOME: dir });
    expect(dead.stderr).toStartWith("unhealthy: http://127.0.0.1:1/healthz:");
    expect(dead.code).toBe(1);
    // Its process id now belongs to another process (a runner killed without removing its note): not a runner either.
    const other = Bun.spawn(["sleep", "30"]);
    try {
      writeFileSync(file, JSON.stringify({ pid: other.pid, server: "https://svc.example.test", contact_at: new Date().toISOString() }));
      const reused = await healthcheck(["--port", "1"], { HOME: dir });
      expect(reused.stderr).toStartWith("unhealthy: http://127.0.0.1:1/healthz:");
    } finally {
      other.kill("SIGKILL");
      await other.exited;
    }
  });
});
