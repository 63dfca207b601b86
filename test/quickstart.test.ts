// The README's first command, `npm start` (scripts/quickstart.sh): it builds, creates the first user and an API key
// on the first start and prints them once, and serves; the printed key and password work; a second start on the
// same data keeps them and prints no new secrets.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freshDatabaseUrl } from "./helpers/postgres";
import { tempDir } from "./helpers/server";

setDefaultTimeout(90_000);

const ROOT = resolve(import.meta.dir, "..");
const dataDir = join(tempDir("svc-quickstart-"), "data");
const running: Bun.Subprocess[] = [];

afterAll(async () => {
  for (const p of running) if (p.exitCode === null) p.kill("SIGKILL");
});

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port ?? 0;
  probe.stop(true);
  return port;
}

/** The environment without svc's own settings (a PostgreSQL pass sets some), so that each start says its own. */
function withoutSvcSettings(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && !/^SVC_(DATA_DIR|PORT|CONFIG|DATABASE_URL)$/.test(e[0])),
  );
}

/** Runs the quickstart until the service listens; returns everything it printed so far. */
async function quickstart(port: number, env: Record<string, string> = { SVC_DATA_DIR: dataDir, SVC_PORT: String(port) }) {
  const proc = Bun.spawn(["bash", "scripts/quickstart.sh"], {
    cwd: ROOT,
    env: { ...withoutSvcSettings(process.env), SVC_LOG_LEVEL: "warn", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  running.push(proc);
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  void drain(proc.stdout);
  void drain(proc.stderr);
  const until = Date.now() + 60_000;
  while (!/svc listening on /.test(text)) {
    if (proc.exitCode !== null) throw new Error(`the quickstart exited with ${proc.exitCode}:\n${text}`);
    if (Date.now() > until) throw new Error(`the quickstart did not start the service within 60 s:\n${text}`);
    await Bun.sleep(50);
  }
  return { proc, out: () => text };
}

test("npm start: first user and key printed once, both work, and a restart keeps them", async () => {
  expect((await Bun.file(join(ROOT, "package.json")).json()).scripts.start).toBe("bash scripts/quickstart.sh");
  const port = freePort();
  const first = await quickstart(port);
  const printed = first.out();
  expect(printed).toContain(`svc is starting on http://127.0.0.1:${port}`);
  const email = /First user:\s+(\S+)/.exec(printed)?.[1];
  const password = /Password:\s+(\S+)/.exec(printed)?.[1];
  const key = /API key:\s+(svc_\S+)/.exec(printed)?.[1];
  expect(email).toBe("admin@example.com");
  expect(password?.length).toBe(20);
  expect(key).toMatch(/^svc_[0-9A-Za-z]{43}$/);

  const base = `http://127.0.0.1:${port}`;
  const projects = await fetch(`${base}/api/v1/ops/projects`, { headers: { authorization: `Bearer ${key}` } });
  expect(projects.status).toBe(200);
  expect(await projects.json()).toMatchObject({ data: [] });
  const signIn = await fetch(`${base}/api/v1/web/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify({ email, password }),
  });
  expect(signIn.status).toBe(200);

  first.proc.kill("SIGTERM");
  expect(await first.proc.exited).toBe(0);

  const second = await quickstart(port);
  expect(second.out()).not.toContain("API key:");
  expect(second.out()).not.toContain(String(password));
  const again = await fetch(`${base}/api/v1/ops/me`, { headers: { authorization: `Bearer ${key}` } });
  expect(again.status).toBe(200);
  expect((await again.json()).user.email).toBe("admin@example.com");
  second.proc.kill("SIGTERM");
  expect(await second.proc.exited).toBe(0);
});

test("npm start on PostgreSQL with a config file: its data directory and port are used, and a restart prints no new secrets and keeps the password", async () => {
  const port = freePort();
  const dir = tempDir("svc-quickstart-config-");
  const configFile = join(dir, "svc.toml");
  const configuredDir = join(dir, "configured-data");
  writeFileSync(configFile, `data_dir = "${configuredDir}"\nport = ${port}\n\n[database]\nurl = "${await freshDatabaseUrl()}"\n`);
  const first = await quickstart(port, { SVC_CONFIG: configFile });
  const printed = first.out();
  expect(printed).toContain(`svc is starting with ${configFile}`);
  expect(printed).toContain(`svc listening on http://127.0.0.1:${port}`);
  const password = /Password:\s+(\S+)/.exec(printed)?.[1];
  const key = /API key:\s+(svc_\S+)/.exec(printed)?.[1];
  expect(key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
  // The config's data directory holds the secrets key; the data itself is in PostgreSQL.
  expect(existsSync(join(configuredDir, "secrets.key"))).toBe(true);
  expect(existsSync(join(configuredDir, "svc.sqlite"))).toBe(false);
  first.proc.kill("SIGTERM");
  expect(await first.proc.exited).toBe(0);

  // Before, a start found no svc.sqlite and made the first user again: a new password and a new key every start.
  const second = await quickstart(port, { SVC_CONFIG: configFile });
  expect(second.out()).not.toContain("API key:");
  expect(second.out()).not.toContain("Password:");
  const base = `http://127.0.0.1:${port}`;
  const me = await fetch(`${base}/api/v1/ops/me`, { headers: { authorization: `Bearer ${key}` } });
  expect(me.status).toBe(200);
  const signIn = await fetch(`${base}/api/v1/web/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify({ email: "admin@example.com", password }),
  });
  expect(signIn.status).toBe(200);
  second.proc.kill("SIGTERM");
  expect(await second.proc.exited).toBe(0);
});
