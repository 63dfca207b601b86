// What an operator meets with the compiled binary on one machine: a second svc serve on a data directory another
// one holds changes nothing in it (not even a pending migration), settings that cannot be used are told with where
// their value came from, misspelt SVC_* variables are told at start, a listening address that cannot be had names
// the settings to change, and a restored data directory is its user's alone.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { chmodSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { Kysely } from "kysely";
import { migrations } from "../src/db/migrations";
import { appliedSqliteMigrations, sqliteDialect } from "../src/db/sqlite";
import { BINARY, requireBinary, runBinary, type ServeProcess, startServe } from "./helpers/binary";
import { WebClient } from "./helpers/browser";
import { tempDir } from "./helpers/server";

let work: string;
let serve: ServeProcess;
const data = () => join(work, "data");

beforeAll(async () => {
  requireBinary();
  work = tempDir("svc-ops-");
  // A misspelt variable beside the server: it is told at start, not silently left out.
  serve = await startServe(["--data-dir", data()], { env: { SVC_RATE_LIMIT_ENABLE: "false" } });
});
afterAll(async () => {
  if (serve.proc.exitCode === null) await serve.stop("SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

const applied = appliedSqliteMigrations;

test("a misspelt SVC_* variable is named at start with the setting it probably means", async () => {
  const logs = await serve.logsWith("SVC_RATE_LIMIT_ENABLE is not a setting");
  const line = logs.split("\n").find((l) => l.includes("SVC_RATE_LIMIT_ENABLE is not a setting"));
  expect(line).toBeDefined();
  expect(JSON.parse(line ?? "{}")).toMatchObject({
    level: "warn",
    msg: "SVC_RATE_LIMIT_ENABLE is not a setting of svc serve and is ignored: did you mean SVC_RATE_LIMIT_ENABLED?",
  });
});

test("a fresh installation says at start how the first owner is made", async () => {
  const logs = await serve.logsWith("no user yet");
  const line = logs.split("\n").find((l) => l.includes("no user yet"));
  expect(JSON.parse(line ?? "{}")).toMatchObject({
    level: "info",
    msg: "no user yet: open the web application on this machine (or at base_url) to set up the first owner, or run svc admin create-user",
    url: serve.url,
  });
});

test("a second svc serve, or svc admin, of a newer version on a data directory an older server holds is refused before it migrates the database", async () => {
  // The database as an older svc serve keeps it: without this version's newest migration.
  const file = join(data(), "svc.sqlite");
  const newest = Object.keys(migrations).sort().at(-1) as string;
  const sqlite = new Database(file);
  const db = new Kysely<unknown>({ dialect: sqliteDialect(sqlite) });
  await migrations[newest]?.down?.(db);
  sqlite.run("DELETE FROM kysely_migration WHERE name = ?", [newest]);
  await db.destroy();
  const second = await runBinary(["serve", "--port", "0", "--data-dir", data()]);
  expect(second.code).toBe(1);
  expect(second.stderr).toContain(`another svc serve (pid ${serve.proc.pid}) is using the data directory`);
  // The schema under the running server is the one it had: the refused server applied nothing.
  expect(applied(file)).not.toContain(newest);
  // Nor does a command of this newer version: it says to restart the server with it first.
  const admin = await runBinary(["admin", "create-user", "--email", "late@acme.test", "--name", "Late", "--workspace", "acme", "--data-dir", data()]);
  expect(admin.code).toBe(1);
  expect(admin.stderr).toContain(
    `svc serve (pid ${serve.proc.pid}) runs an older svc on ${data()}, whose database lacks this version's migrations (${newest})`,
  );
  expect(applied(file)).not.toContain(newest);
});

test("a port in use, or a host that is not this machine's, is refused naming the settings to change", async () => {
  const port = new URL(serve.url).port;
  const taken = await runBinary(["serve", "--port", port, "--data-dir", join(work, "other")]);
  expect(taken.code).toBe(1);
  expect(taken.stderr).toContain(`127.0.0.1:${port}`);
  expect(taken.stderr).toContain("(--port, SVC_PORT or port in the config file)");
  // 192.0.2.1 is TEST-NET-1: never an address of this machine.
  const elsewhere = await runBinary(["serve", "--port", "0", "--data-dir", join(work, "other")], { env: { SVC_HOST: "192.0.2.1" } });
  expect(elsewhere.code).toBe(1);
  expect(elsewhere.stderr).toContain("cannot listen on 192.0.2.1:0");
  expect(elsewhere.stderr).toContain("host (--host, SVC_HOST or host in the config file)");
});

test("a setting that cannot be used is told with its value and where it came from; an unknown key with the file", async () => {
  const cases: { args: string[]; env?: Record<string, string>; file?: string; says: string }[] = [
    { args: [], env: { SVC_PORT: "eighty" }, says: 'port (or SVC_PORT): expected a number ("eighty" from SVC_PORT)' },
    { args: ["--port", "eighty"], says: 'port (or SVC_PORT): expected a number ("eighty" from --port)' },
    { args: [], file: 'port = "eighty"\n', says: 'port (or SVC_PORT): expected a number ("eighty" from the config file ' },
    { args: [], file: 'log_levl = "debug"\n', says: 'invalid configuration in FILE: unknown field "log_levl" (did you mean "log_level"?)' },
    {
      args: [],
      file: "[rate_limit]\nenabeld = false\n",
      says: 'invalid configuration in FILE: [rate_limit] unknown field "enabeld" (did you mean "enabled"?)',
    },
  ];
  for (const [i, c] of cases.entries()) {
    const file = join(work, `bad-${i}.toml`);
    if (c.file) await Bun.write(file, c.file);
    const r = await runBinary(["serve", "--data-dir", join(work, "never"), ...c.args, ...(c.file ? ["--config", file] : [])], { env: c.env });
    expect({ i, code: r.code }).toEqual({ i, code: 2 });
    expect(r.stderr).toContain(c.says.replace("FILE", file));
    expect(r.stderr.trim().split("\n").length).toBe(1);
  }
  // A value that may hold a credential is named by where it came from, never shown.
  const url = await runBinary(["serve", "--data-dir", join(work, "never")], { env: { SVC_DATABASE_URL: "mysql://svc:hunter2hunter2@db/svc" } });
  expect(url.code).toBe(2);
  expect(url.stderr).toContain("database.url (or SVC_DATABASE_URL)");
  expect(url.stderr).toContain("(from SVC_DATABASE_URL)");
  expect(url.stderr).not.toContain("hunter2");
});

test("a backup restored into a new data directory is its user's alone, whatever mode the backup file had", async () => {
  const source = join(work, "source");
  const made = await runBinary(["admin", "create-user", "--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme", "--data-dir", source]);
  expect(made.code).toBe(0);
  const backup = join(work, "kept.sqlite");
  expect((await runBinary(["admin", "backup", "--out", backup, "--data-dir", source])).code).toBe(0);
  // Copied off the machine and back, a backup may come back readable by everyone.
  chmodSync(backup, 0o644);
  const target = join(work, "restored", "data");
  const r = await runBinary(["admin", "restore", "--from", backup, "--data-dir", target]);
  expect(r.code).toBe(0);
  expect(statSync(target).mode & 0o777).toBe(0o700);
  expect(statSync(join(target, "svc.sqlite")).mode & 0o777).toBe(0o600);
});

test("create-user --password-stdin at a terminal asks for the password with its input hidden", async () => {
  const dir = join(work, "tty");
  const password = "typed at a terminal 7";
  // `script` gives the command a real terminal; what the terminal shows comes back on its stdout.
  const command = [BINARY, "admin", "create-user", "--email", "tty@acme.test", "--name", "Tty", "--workspace", "acme", "--password-stdin", "--data-dir", dir];
  const proc = Bun.spawn(["script", "-qec", command.map((a) => `'${a}'`).join(" "), "/dev/null"], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, TERM: "dumb" },
  });
  let shown = "";
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  while (!shown.includes("Password (input hidden): ")) {
    const { value, done } = await reader.read();
    if (done) break;
    shown += decoder.decode(value);
  }
  expect(shown).toContain("Password (input hidden): ");
  proc.stdin.write(`${password}\r`);
  await proc.stdin.flush();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    shown += decoder.decode(value);
  }
  expect(await proc.exited).toBe(0);
  expect(shown).toContain("tty@acme.test");
  expect(shown).not.toContain(password);
  // The password typed is the one stored: the web application signs in with it.
  const server = await startServe(["--data-dir", dir]);
  try {
    expect((await new WebClient(server.url).signIn("tty@acme.test", password)).status).toBe(200);
  } finally {
    await server.stop();
  }
});
