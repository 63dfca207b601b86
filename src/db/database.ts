// Opens the store: SQLite in the data directory (src/db/sqlite.ts) or, when `database.url` is set, PostgreSQL
// (src/db/postgres.ts), wrapped in Kysely, with the migrations applied at start in one transaction.
import type { Database } from "bun:sqlite";
import { accessSync, constants, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Kysely, sql } from "kysely";
import { type Migration, Migrator } from "kysely/migration";
import type { ChangeFeed, RunQueueStore, SharedBuckets, StorageErrorKind, StorageProbe } from "../core/storage";
import { log } from "../logging";
import { VERSION } from "../version";
import { migrations } from "./migrations";
import { takeRenamedDuplicates } from "./migrations/0010_cockpit";
import type { DB } from "./schema";
import { PostgresBuckets } from "./postgres-buckets";
import { classifyPostgresError, newNodeId, openPool, PoolDialect, PostgresChangeFeed, PostgresProbe, PostgresRunQueue, underMigrationLock } from "./postgres";
import { BackgroundCheckpoints } from "./sqlite-checkpoints";
import { classifySqliteError, openSqliteFile, SqliteChangeFeed, SqliteProbe, SqliteRunQueue, sqliteDialect } from "./sqlite";

export type Db = Kysely<DB>;

export type StorageBackend = "sqlite" | "postgres";

export interface OpenedDatabase {
  db: Db;
  backend: StorageBackend;
  /** SQLite's raw connection, for tests that set up or break the file directly (absent on PostgreSQL); the code uses `db`, `queue` and `probe`. */
  sqlite?: Database;
  changes: ChangeFeed;
  queue: RunQueueStore;
  probe: StorageProbe;
  /** Request budgets every node shares (PostgreSQL); absent on SQLite, whose one process keeps them in memory. */
  buckets?: SharedBuckets;
  /** SQLite under svc serve: the thread that checkpoints its log. */
  checkpoints?: BackgroundCheckpoints | null;
  /** Where the data is: the SQLite file, or the PostgreSQL URL without its password. */
  path: string;
  close(): Promise<void>;
}

export class DatabaseOpenError extends Error {}

export function databasePath(dataDir: string): string {
  return join(dataDir, "svc.sqlite");
}

/** How the open store names a failure (busy, disk full, constraint), or null when it is not a storage failure. */
export function storageErrorKind(e: unknown): StorageErrorKind | null {
  return classifySqliteError(e) ?? classifyPostgresError(e);
}

/**
 * Opens the store the configuration names: PostgreSQL when `url` (database.url) is set, else SQLite in the data
 * directory.
 */
export async function openDatabase(
  dataDir: string,
  opts: { busyTimeoutMs?: number; url?: string; backgroundCheckpoints?: boolean } = {},
): Promise<OpenedDatabase> {
  if (opts.url) return openPostgres(opts.url);
  try {
    // Its owner's alone, as the database and the secrets key in it are (a directory that exists keeps its mode).
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new DatabaseOpenError(`cannot create the data directory ${dataDir}: ${(e as Error).message}`);
  }
  // SQLite only says "unable to open database file" for a read-only directory; access() names the cause.
  try {
    accessSync(dataDir, constants.W_OK);
  } catch (e) {
    throw new DatabaseOpenError(
      `the data directory ${dataDir} is not writable (${(e as Error).message}): give svc a writable directory (--data-dir or SVC_DATA_DIR)`,
    );
  }
  const path = databasePath(dataDir);
  let sqlite: Database;
  try {
    // A new database is created 0600 (SQLite would make it as the umask says, 0644 as a rule): it holds password,
    // key and session hashes and every run's results. Its -wal and -shm files take the same mode from it.
    try {
      writeFileSync(path, "", { mode: 0o600, flag: "wx" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    sqlite = openSqliteFile(path, opts.busyTimeoutMs ?? 5000);
  } catch (e) {
    const reason = (e as Error).message;
    const hint = storageErrorKind(e) === "disk_full" ? ": free space on the data directory's filesystem" : "";
    throw new DatabaseOpenError(`cannot open the database ${path}: ${reason}${hint}`);
  }
  const changes = new SqliteChangeFeed(sqlite);
  const db = new Kysely<DB>({ dialect: sqliteDialect(sqlite), plugins: [changes] });
  await migrateToLatest(db, path);
  const probe = new SqliteProbe(sqlite, db, path, Object.keys(migrations));
  // svc serve: its thread does not copy the log back into the file (see sqlite-checkpoints.ts).
  const checkpoints = opts.backgroundCheckpoints ? new BackgroundCheckpoints(sqlite, path) : null;
  return {
    db,
    backend: "sqlite",
    sqlite,
    changes,
    queue: new SqliteRunQueue(sqlite, db, changes),
    probe,
    path,
    checkpoints,
    async close() {
      probe.close();
      await checkpoints?.close();
      await db.destroy();
    },
  };
}

/**
 * The URL as it may be shown: without its password, whether in its user part or as a parameter (libpq's
 * `?password=` and `?sslpassword=`, which an operator may write as well).
 */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    for (const name of [...u.searchParams.keys()]) if (/password/i.test(name)) u.searchParams.set(name, "***");
    return u.toString();
  } catch {
    return "postgres://…";
  }
}

async function openPostgres(url: string): Promise<OpenedDatabase> {
  const shown = redactedUrl(url);
  const nodeId = newNodeId();
  let pool: ReturnType<typeof openPool>;
  try {
    pool = openPool(url, { nodeId });
  } catch (e) {
    // The driver only says "Invalid URL" (a password holding "/" or "#" cuts the URL short), not which one.
    throw new DatabaseOpenError(
      `database.url is not a valid PostgreSQL URL (${(e as Error).message}): write it as postgres://user:password@host:port/database, with any of / ? # @ : % in the user name or password percent-encoded (e.g. %2F for /)`,
    );
  }
  const changes = new PostgresChangeFeed(nodeId);
  const db = new Kysely<DB>({ dialect: new PoolDialect(pool), plugins: [changes] });
  try {
    await underMigrationLock(pool, () => migrateToLatest(db, shown));
    await changes.listen(pool);
  } catch (e) {
    await changes.stop();
    await db.destroy().catch(() => undefined);
    if (e instanceof DatabaseOpenError) throw e;
    throw new DatabaseOpenError(`cannot open the database ${shown}: ${(e as Error).message}`);
  }
  return {
    db,
    backend: "postgres",
    changes,
    queue: new PostgresRunQueue(pool, db, changes),
    probe: new PostgresProbe(pool, Object.keys(migrations)),
    buckets: new PostgresBuckets(pool),
    path: shown,
    async close() {
      await changes.stop();
      await db.destroy();
    },
  };
}

export async function migrateToLatest(db: Kysely<DB>, path: string, list: Record<string, Migration> = migrations): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => list } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const msg = (error as Error).message ?? String(error);
    if (/missing|corrupted/i.test(msg)) throw new DatabaseOpenError(await newerSchemaMessage(db, path, list));
    const failed = results?.find((r) => r.status === "Error");
    throw new DatabaseOpenError(`migration ${failed?.migrationName ?? "?"} failed on ${path}: ${msg}`);
  }
  // Names became unique within a project (0010_cockpit): say once what had to be renamed.
  for (const r of takeRenamedDuplicates()) {
    log.warn(`renamed a duplicate ${r.table === "automations" ? "automation" : "group"} name: "${r.from}" is now "${r.to}"`, { id: r.id });
  }
}

/**
 * Why a database with migrations this binary does not know is refused, naming both schema versions: the newest
 * migration the database has and the newest this svc knows. Nothing was changed (the migrator stops first).
 */
async function newerSchemaMessage(db: Kysely<DB>, path: string, list: Record<string, Migration>): Promise<string> {
  const known = Object.keys(list).sort();
  const applied = await sql<{ name: string }>`SELECT name FROM kysely_migration`
    .execute(db)
    .then((r) => r.rows.map((row) => row.name).sort())
    .catch(() => [] as string[]);
  const unknown = applied.filter((n) => !known.includes(n));
  const dbVersion = applied.at(-1) ?? "?";
  return (
    `the database ${path} was written by a newer version of svc: its schema is at ${dbVersion}, this svc ${VERSION} knows schemas up to ${known.at(-1) ?? "?"}` +
    ` (unknown migrations: ${unknown.join(", ") || "?"}). Run the same svc version on every node: to upgrade svc, stop all nodes, upgrade each, then start them; to go back, restore a backup taken before the upgrade`
  );
}
