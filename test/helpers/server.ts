// Starts the real server on a free port with a fresh SQLite file in a temp dir (or, with
// SVC_TEST_BACKEND=postgres, a fresh PostgreSQL database: test/helpers/postgres.ts), and makes users and keys.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { loadConfig } from "../../config/load";
import type { ConfigInput } from "../../config/schema";
import { createApiKey, createUserInWorkspace } from "../../src/core/access/users";
import { type RunningServer, startServer } from "../../src/server";
import { contractChecker } from "./contract";
import { copiedDatabaseUrl, freshDatabaseUrl, onPostgres } from "./postgres";

export interface TestServer {
  url: string;
  api: string;
  dataDir: string;
  server: RunningServer;
  /** An owner's key in workspace "acme". */
  key: string;
  /** Creates a member of a workspace and returns a key for them. */
  userWithKey(
    email: string,
    workspace: string,
    role?: "owner" | "admin" | "member",
    /** `{ inMs }`: that long after the key is made (making the user first may take a second on a busy machine). */
    expiresAt?: string | null | { inMs: number },
  ): Promise<{ key: string; keyId: string; userId: string; expiresAt: string | null }>;
  /** The PostgreSQL database the server uses (SVC_TEST_BACKEND=postgres); undefined on SQLite. */
  databaseUrl?: string;
  /**
   * Runs one statement on the server's database through a connection of its own, as another process would (`?`
   * placeholders; add RETURNING to see what a write changed). Counts come back as numbers on both backends.
   */
  sql<R = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<R[]>;
  /** fetch against the API with a key (the owner's by default); the response is checked against the OpenAPI document. */
  call(method: string, path: string, body?: unknown, key?: string | null, headers?: Record<string, string>): Promise<Response>;
  stop(): Promise<void>;
}

type Overrides = Record<string, unknown>;

export function tempDir(prefix = "svc-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Two nodes on one fresh PostgreSQL database: node A, a test server whose engine executes every run, and node B,
 * which only serves the API (`runner.local` off) with A's secrets key. `stop()` stops both.
 */
export async function nodeAWithApiNodeB(): Promise<{ a: TestServer; b: RunningServer; stop(): Promise<void> }> {
  const url = await freshDatabaseUrl();
  const a = await startTestServer({ database: { url } });
  const dir = tempDir("svc-pg-node-b-");
  const flags = { port: 0, data_dir: dir, log_level: "warn", "database.url": url, "secrets.key_file": join(a.dataDir, "secrets.key"), "runner.local": false };
  const b = await startServer(loadConfig({ env: {}, flags }));
  return {
    a,
    b,
    async stop() {
      await b.stop();
      await a.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** On PostgreSQL, the database of each data directory: a server restarted on the same directory finds its data. */
const databases = new Map<string, Promise<string>>();

/** The database a test server on `dataDir` uses: its PostgreSQL URL, or undefined on SQLite (the file in the directory). */
export function testDatabaseUrl(dataDir: string): Promise<string> | undefined {
  if (!onPostgres) return undefined;
  let url = databases.get(dataDir);
  if (!url) {
    url = freshDatabaseUrl();
    databases.set(dataDir, url);
  }
  return url;
}

/**
 * Copies the store of a test data directory to another (the caller copies the directory itself): on PostgreSQL a
 * new database made from the first one, which nothing may be connected to.
 */
export async function copyTestDatabase(fromDir: string, toDir: string): Promise<void> {
  const from = await testDatabaseUrl(fromDir);
  if (from) databases.set(toDir, copiedDatabaseUrl(from));
}

/** The environment that points `svc admin` or `svc serve` in another process at the same database as a test server on `dataDir`. */
export async function databaseEnv(dataDir: string): Promise<Record<string, string>> {
  const url = await testDatabaseUrl(dataDir);
  return url ? { SVC_DATABASE_URL: url } : {};
}

export async function startTestServer(overrides: Overrides = {}, env: Record<string, string> = {}): Promise<TestServer> {
  const dataDir = (overrides.data_dir as string | undefined) ?? tempDir();
  const databaseUrl = env.SVC_DATABASE_URL ? undefined : await testDatabaseUrl(dataDir);
  const flags: Overrides = { port: 0, data_dir: dataDir, log_level: "warn", ...(databaseUrl ? { database: { url: databaseUrl } } : {}), ...overrides };
  const config = loadConfig({ env, flags: flattenFlags(flags) });
  const server = await startServer(config);
  const url = server.url;
  const api = `${url}/api/v1/ops`;
  const userWithKey: TestServer["userWithKey"] = async (email, workspace, role = "owner", expiresAt = null) => {
    const u = await createUserInWorkspace(server.core.db, { email, name: email.split("@")[0] ?? email, workspace, role, password: "correct horse battery" });
    const at = expiresAt !== null && typeof expiresAt === "object" ? new Date(Date.now() + expiresAt.inMs).toISOString() : expiresAt;
    const k = await createApiKey(server.core.db, { userId: u.userId, workspaceId: u.workspaceId, name: `key of ${email}`, expiresAt: at });
    server.core.keys.invalidate();
    return { key: k.key, keyId: k.id, userId: u.userId, expiresAt: k.expires_at };
  };
  const owner = await userWithKey("owner@acme.test", "acme", "owner");
  const contract = contractChecker(config.rate_limit.enabled);
  const call: TestServer["call"] = async (method, path, body, key = owner.key, headers = {}) => {
    const res = await fetch(`${api}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    // Every response a test sees must keep the published contract.
    const problems = await contract.problems(method, path, res);
    if (problems.length > 0) throw new Error(`the response breaks the OpenAPI contract:\n  ${problems.join("\n  ")}`);
    return res;
  };
  const usedUrl = config.database.url;
  return {
    url,
    api,
    dataDir,
    databaseUrl: usedUrl,
    sql: (text, ...params) => runSql(usedUrl, dataDir, text, params),
    server,
    key: owner.key,
    userWithKey,
    call,
    async stop() {
      await server.stop();
      if (!overrides.data_dir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One statement through a connection of its own: PostgreSQL when `url` is set, else the SQLite file in `dataDir`. */
export async function runSql<R>(url: string | undefined, dataDir: string, text: string, params: unknown[]): Promise<R[]> {
  if (url) {
    const pg = postgres(url, { max: 1, onnotice: () => undefined, types: { int8: { to: 20, from: [20], parse: Number, serialize: String } } });
    try {
      let n = 0;
      const rows = await pg.unsafe(
        text.replace(/\?/g, () => `$${++n}`),
        params as never[],
      );
      return [...rows] as R[];
    } finally {
      await pg.end();
    }
  }
  const db = new Database(join(dataDir, "svc.sqlite"));
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return db.query(text).all(...(params as never[])) as R[];
  } finally {
    db.close();
  }
}

/** Nested override objects become dotted flags ({rate_limit: {enabled: false}} → "rate_limit.enabled"). */
export function flattenFlags(o: Overrides, prefix = ""): Overrides {
  const out: Overrides = {};
  for (const [k, v] of Object.entries(o)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v && typeof v === "object" && !Array.isArray(v)) Object.assign(out, flattenFlags(v as Overrides, key));
    else out[key] = v;
  }
  return out;
}

export type { ConfigInput };

/** SQLite's raw connection of a core or store; throws on PostgreSQL (the tests that use it are about SQLite's file). */
export function rawSqlite<T>(x: { sqlite?: T }): T {
  if (!x.sqlite) throw new Error("this test reads SQLite's file directly: run it on the SQLite backend");
  return x.sqlite;
}
