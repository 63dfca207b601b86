// Opens the store: the data directory, the SQLite dialect (src/db/sqlite.ts) wrapped in Kysely, and the
// migrations, applied at start in one transaction.
import type { Database } from "bun:sqlite";
import { accessSync, constants, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Kysely } from "kysely";
import { type Migration, Migrator } from "kysely/migration";
import type { StorageErrorKind } from "../core/storage";
import { log } from "../logging";
import { migrations } from "./migrations";
import { takeRenamedDuplicates } from "./migrations/0010_cockpit";
import type { DB } from "./schema";
import { classifySqliteError, openSqliteFile, SqliteChangeFeed, SqliteProbe, SqliteRunQueue, sqliteDialect } from "./sqlite";

export type Db = Kysely<DB>;

export interface OpenedDatabase {
  db: Db;
  /** The raw connection, for tests that set up or break the file directly; the code uses `db`, `queue` and `probe`. */
  sqlite: Database;
  changes: SqliteChangeFeed;
  queue: SqliteRunQueue;
  probe: SqliteProbe;
  path: string;
  close(): Promise<void>;
}

export class DatabaseOpenError extends Error {}

export function databasePath(dataDir: string): string {
  return join(dataDir, "svc.sqlite");
}

/** How the open store names a failure (busy, disk full, constraint), or null when it is not a storage failure. */
export function storageErrorKind(e: unknown): StorageErrorKind | null {
  return classifySqliteError(e);
}

export async function openDatabase(dataDir: string, opts: { busyTimeoutMs?: number } = {}): Promise<OpenedDatabase> {
  try {
    mkdirSync(dataDir, { recursive: true });
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
  return {
    db,
    sqlite,
    changes,
    queue: new SqliteRunQueue(sqlite, db, changes),
    probe,
    path,
    async close() {
      probe.close();
      await db.destroy();
    },
  };
}

export async function migrateToLatest(db: Kysely<DB>, path: string, list: Record<string, Migration> = migrations): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => list } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const msg = (error as Error).message ?? String(error);
    if (/missing|corrupted/i.test(msg)) {
      throw new DatabaseOpenError(
        `the database ${path} was written by a newer version of svc (it has migrations this binary does not know); upgrade svc to open it`,
      );
    }
    const failed = results?.find((r) => r.status === "Error");
    throw new DatabaseOpenError(`migration ${failed?.migrationName ?? "?"} failed on ${path}: ${msg}`);
  }
  // Names became unique within a project (0010_cockpit): say once what had to be renamed.
  for (const r of takeRenamedDuplicates()) {
    log.warn(`renamed a duplicate ${r.table === "automations" ? "automation" : "group"} name: "${r.from}" is now "${r.to}"`, { id: r.id });
  }
}
