// Opens the SQLite database (WAL, foreign keys, busy timeout), wraps it in Kysely and applies migrations.
// SQLite-specific SQL lives only in src/db/ (here, the migrations and fast-paths.ts).
import { Database } from "bun:sqlite";
import { accessSync, constants, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Kysely, SqliteAdapter, SqliteDialect, type DialectAdapter, type SqliteDatabase } from "kysely";
import { type Migration, Migrator } from "kysely/migration";
import { ChangeTracker } from "./change-tracker";
import { migrations } from "./migrations";
import type { DB } from "./schema";

export type Db = Kysely<DB>;

export interface OpenedDatabase {
  db: Db;
  /** The raw connection, for the few hot-path statements that bypass the query builder. */
  sqlite: Database;
  changes: ChangeTracker;
  path: string;
  close(): Promise<void>;
}

export class DatabaseOpenError extends Error {}

export function databasePath(dataDir: string): string {
  return join(dataDir, "svc.sqlite");
}

/** Kysely's SQLite driver calls `prepare` for every query; bun:sqlite's `query` caches the statement. */
function withStatementCache(sqlite: Database): SqliteDatabase {
  return {
    close: () => sqlite.close(),
    prepare: (sql: string) => sqlite.query(sql),
  } as unknown as SqliteDatabase;
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
    throw new DatabaseOpenError(`the data directory ${dataDir} is not writable (${(e as Error).message}): give svc a writable directory (--data-dir or SVC_DATA_DIR)`);
  }
  const path = databasePath(dataDir);
  let sqlite: Database;
  try {
    sqlite = new Database(path, { create: true, strict: false });
    sqlite.exec(`PRAGMA busy_timeout = ${Math.trunc(opts.busyTimeoutMs ?? 5000)}`);
    sqlite.exec("PRAGMA journal_mode = WAL");
    sqlite.exec("PRAGMA synchronous = NORMAL");
    sqlite.exec("PRAGMA foreign_keys = ON");
  } catch (e) {
    const reason = (e as Error).message;
    const hint = /disk is full/i.test(reason) ? ": free space on the data directory's filesystem" : "";
    throw new DatabaseOpenError(`cannot open the database ${path}: ${reason}${hint}`);
  }
  const changes = new ChangeTracker(sqlite);
  const db = new Kysely<DB>({ dialect: new TransactionalSqliteDialect({ database: withStatementCache(sqlite) }), plugins: [changes] });
  await migrateToLatest(db, path);
  return {
    db,
    sqlite,
    changes,
    path,
    async close() {
      await db.destroy();
    },
  };
}

/** Kysely's SQLite adapter declares no transactional DDL, so its Migrator would apply migrations one statement
 * at a time; SQLite does roll DDL back, so declaring it makes a start's pending migrations one transaction. */
class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
class TransactionalSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlAdapter();
  }
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
}

/** A consistent online copy of the database as a plain SQLite file. */
export function backupDatabase(sqlite: Database, outFile: string): void {
  sqlite.query("VACUUM INTO ?").run(outFile);
}
