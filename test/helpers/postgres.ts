// A throw-away PostgreSQL cluster for the tests: ONE per test run (initdb + pg_ctl on a free port in a temp dir),
// and a fresh database per test server. `npm test` starts it once for all the test processes of its PostgreSQL
// pass and names it in SVC_TEST_POSTGRES_URL (scripts/test.ts); without it, a test process starts its own on first
// use, stopped when that process exits. clusterOfItsOwn makes another for a test that stops it. Run as the
// `postgres` user when the tests run as root (initdb refuses root).
import { randomUUID } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";

/** Whether the tests of this process run their servers on PostgreSQL (SVC_TEST_BACKEND=postgres). */
export const onPostgres = process.env.SVC_TEST_BACKEND === "postgres";

const BIN_DIRS = ["/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/bin"];

function pgBin(name: string): string {
  for (const d of BIN_DIRS) if (existsSync(join(d, name))) return join(d, name);
  throw new Error(`${name} not found: install Debian's postgresql (apt-get install postgresql)`);
}

interface Cluster {
  dir: string;
  port: number;
  adminUrl: string;
  /** pg_ctl's command line that starts the cluster again on the same port. */
  start: string[];
}

/** The admin URL of a cluster the whole test run shares, started by scripts/test.ts. */
const SHARED = process.env.SVC_TEST_POSTGRES_URL;

let cluster: Promise<Cluster> | null = SHARED ? Promise.resolve({ dir: "", port: Number(new URL(SHARED).port), adminUrl: SHARED, start: [] }) : null;

/**
 * A database name no other test takes: test files run in parallel processes on the shared cluster, and a process
 * runs several files, each with this module afresh.
 */
const databaseName = () => `svc_test_${randomUUID().replaceAll("-", "")}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function asOwner(cmd: string[]): string[] {
  return process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...cmd] : cmd;
}

function run(cmd: string[]): void {
  const r = Bun.spawnSync(asOwner(cmd), { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

/**
 * Starts a cluster that lives until `stop` (or until this process ends): the one `npm test` shares between the test
 * processes of its PostgreSQL pass.
 */
export async function startSharedCluster(): Promise<{ adminUrl: string; stop(): void }> {
  const c = await startCluster();
  return {
    adminUrl: c.adminUrl,
    stop: () => {
      Bun.spawnSync(asOwner([pgBin("pg_ctl"), "-D", join(c.dir, "data"), "-m", "immediate", "-w", "stop"]), { stdout: "ignore", stderr: "ignore" });
      rmSync(c.dir, { recursive: true, force: true });
    },
  };
}

async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), "svc-pg-"));
  if (process.getuid?.() === 0) {
    const id = Bun.spawnSync(["id", "-u", "postgres"]);
    const gid = Bun.spawnSync(["id", "-g", "postgres"]);
    if (id.exitCode !== 0) throw new Error("no `postgres` user: install Debian's postgresql (apt-get install postgresql)");
    chownSync(dir, Number(id.stdout.toString().trim()), Number(gid.stdout.toString().trim()));
  }
  chmodSync(dir, 0o700);
  const data = join(dir, "data");
  // C collation: text sorts by code point, as SQLite's does.
  run([pgBin("initdb"), "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]);
  let port = 0;
  let start: string[] = [];
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=800`;
      start = [pgBin("pg_ctl"), "-D", data, "-o", opts, "-l", join(dir, "log"), "-w", "start"];
      run(start);
      break;
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
  // bun test does not always run exit handlers: a watcher in its own session waits for this process to end (however
  // it ends), then stops the cluster and removes its directory.
  const stop = asOwner([pgBin("pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"])
    .map(shellQuote)
    .join(" ");
  // (Started through a shell that returns at once, so that bun test does not count it as a process left running.)
  const watch = `tail --pid=${process.pid} -f /dev/null; ${stop}; rm -rf ${shellQuote(dir)}`;
  Bun.spawnSync(["sh", "-c", `setsid sh -c ${shellQuote(watch)} </dev/null >/dev/null 2>&1 &`]);
  return { dir, port, adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`, start };
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** A copy of a database of this process's cluster (nothing may be connected to it): its URL. */
export async function copiedDatabaseUrl(fromUrl: string): Promise<string> {
  cluster ??= startCluster();
  const c = await cluster;
  const from = new URL(fromUrl).pathname.slice(1);
  const name = databaseName();
  const admin = postgres(c.adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${from}"`);
  } finally {
    await admin.end();
  }
  return `postgres://postgres@127.0.0.1:${c.port}/${name}`;
}

/** A new, empty database in this process's cluster (started on first use); its URL. */
export async function freshDatabaseUrl(): Promise<string> {
  cluster ??= startCluster();
  const c = await cluster;
  const name = databaseName();
  const admin = postgres(c.adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return `postgres://postgres@127.0.0.1:${c.port}/${name}`;
}

/**
 * A cluster of its own for a test that stops and starts PostgreSQL under a server (the shared one serves every
 * other test of the process): the URL of an empty database in it, and its stop and start (same port, same data).
 */
export async function clusterOfItsOwn(): Promise<{ url: string; stop(): void; start(): void }> {
  const c = await startCluster();
  const admin = postgres(c.adminUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE DATABASE "svc"`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://postgres@127.0.0.1:${c.port}/svc`,
    stop: () => run([pgBin("pg_ctl"), "-D", join(c.dir, "data"), "-m", "fast", "-w", "stop"]),
    start: () => run(c.start),
  };
}
