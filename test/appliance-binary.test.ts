// The compiled executable as an appliance: started from an empty directory with no config, healthy at once,
// no .env read, a clean SIGTERM; HTTPS when tls.cert/tls.key are set; a newer database refused.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseOpenError, openDatabase } from "../src/db/database";
import { requireBinary, runBinary, startServe } from "./helpers/binary";
import { tempDir } from "./helpers/server";

let work: string;
beforeAll(() => {
  requireBinary();
  work = tempDir("svc-appliance-");
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("started from an empty directory with no config, it serves /healthz and /readyz and keeps data in ./svc-data", async () => {
  const dir = join(work, "empty");
  Bun.spawnSync(["mkdir", "-p", dir]);
  // A compiled appliance must not pick up a stray .env from where it is started.
  writeFileSync(join(dir, ".env"), `SVC_DATA_DIR=${join(work, "dotenv-data")}\nSVC_LOG_LEVEL=silent\n`);
  const s = await startServe([], { cwd: dir });
  try {
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).checks.migrations.ok).toBe(true);
    expect(existsSync(join(dir, "svc-data", "svc.sqlite"))).toBe(true);
    // Made by svc: its user's alone, as the database in it.
    expect(statSync(join(dir, "svc-data")).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "svc-data", "svc.sqlite")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(work, "dotenv-data"))).toBe(false);
  } finally {
    expect(await s.stop()).toBe(0);
  }
  // Logs are JSON lines; the request log carries a request id.
  const lines = s
    .logs()
    .split("\n")
    .filter((l) => l.startsWith("{"));
  const requests = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === "request");
  expect(requests.length).toBeGreaterThanOrEqual(2);
  for (const r of requests) expect(r.request_id).toStartWith("req_");
});

test("log_level=warn silences the request log", async () => {
  const s = await startServe(["--data-dir", join(work, "quiet")], { cwd: work, env: { SVC_LOG_LEVEL: "warn" } });
  try {
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  } finally {
    await s.stop();
  }
  expect(s.logs()).not.toContain('"msg":"request"');
});

test("with tls.cert and tls.key it serves HTTPS that a client trusting the certificate accepts", async () => {
  const cert = join(work, "tls.crt");
  const key = join(work, "tls.key");
  const made = Bun.spawnSync([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=127.0.0.1",
    "-addext",
    "subjectAltName=IP:127.0.0.1",
    "-keyout",
    key,
    "-out",
    cert,
  ]);
  expect(made.exitCode).toBe(0);
  const config = join(work, "tls.toml");
  writeFileSync(config, `[tls]\ncert = "${cert}"\nkey = "${key}"\n`);
  const s = await startServe(["--config", config, "--data-dir", join(work, "tls-data")], { cwd: work });
  try {
    expect(s.url).toStartWith("https://127.0.0.1:");
    const ok = Bun.spawnSync(["curl", "-sS", "--cacert", cert, `${s.url}/healthz`]);
    expect(ok.stdout.toString()).toBe('{"status":"ok"}');
    // Without trusting the certificate the handshake is refused: it really is TLS with that certificate.
    const untrusted = Bun.spawnSync(["curl", "-sS", `${s.url}/healthz`]);
    expect(untrusted.exitCode).not.toBe(0);
    const plain = Bun.spawnSync(["curl", "-sS", "--max-time", "5", s.url.replace("https:", "http:") + "/healthz"]);
    expect(plain.stdout.toString()).not.toBe('{"status":"ok"}');
    // Over HTTPS the session cookie is Secure (first-run setup signs the owner in).
    const setup = Bun.spawnSync([
      "curl",
      "-sS",
      "-i",
      "--cacert",
      cert,
      "-X",
      "POST",
      "-H",
      "content-type: application/json",
      "-H",
      `origin: ${s.url}`,
      "--data",
      JSON.stringify({ workspace: "TLS QA", name: "Tess", email: "tess@tls.test", password: "tls password 123" }),
      `${s.url}/api/v1/web/setup`,
    ]);
    const head = setup.stdout.toString().split("\r\n\r\n")[0] ?? "";
    expect(head).toStartWith("HTTP/1.1 201");
    const cookie = /^set-cookie: (.*)$/im.exec(head)?.[1] ?? "";
    expect(cookie).toStartWith("svc_session=");
    expect(cookie).toContain("; Secure");
    expect(cookie).toContain("HttpOnly");
  } finally {
    await s.stop();
  }
});

test("a database with migrations this version does not know is refused with a clear message", async () => {
  const dir = join(work, "from-the-future");
  await (await openDatabase(dir)).close();
  const db = new Database(join(dir, "svc.sqlite"));
  db.run("INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_from_a_newer_svc', '2030-01-01T00:00:00.000Z')");
  db.close();
  let thrown: unknown;
  try {
    await openDatabase(dir);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(DatabaseOpenError);
  expect((thrown as Error).message).toContain("newer version of svc");
  const r = await runBinary(["serve", "--port", "0", "--data-dir", dir]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("was written by a newer version of svc");
  expect(r.stderr).toContain("upgrade svc");
});
