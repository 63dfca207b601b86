// A database file as an older svc left it: only the migrations named before `before` applied.
import { Database } from "bun:sqlite";
import { Kysely, SqliteDialect } from "kysely";
import { migrateToLatest } from "../../src/db/database";
import { migrations } from "../../src/db/migrations";

export async function databaseBefore(file: string, before: string): Promise<void> {
  const old = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < before));
  const sqlite = new Database(file, { create: true });
  const db = new Kysely<never>({ dialect: new SqliteDialect({ database: { close: () => sqlite.close(), prepare: (q: string) => sqlite.query(q) } as never }) });
  await migrateToLatest(db as never, file, old);
  await db.destroy();
}
