// Upgrades: pending migrations run at start inside one transaction, so a failing one leaves the database as
// it was; a database from a newer svc is refused (see also test/appliance-binary.test.ts for the binary).
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";
import { DatabaseOpenError, migrateToLatest, openDatabase } from "../src/db/database";
import { migrations } from "../src/db/migrations";
import { tempDir } from "./helpers/server";

const dir = tempDir("svc-migrations-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tables = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((r) => r.name);
  } finally {
    db.close();
  }
};

test("a failing migration rolls back every migration of that start, and the database stays usable", async () => {
  const opened = await openDatabase(dir);
  const before = tables(opened.path);
  const upgrade: Record<string, Migration> = {
    ...migrations,
    "9000_adds_a_table": { up: async (db: Kysely<unknown>) => void (await db.schema.createTable("upgrade_one").addColumn("id", "text").execute()) },
    "9001_fails_halfway": {
      up: async (db: Kysely<unknown>) => {
        await db.schema.createTable("upgrade_two").addColumn("id", "text").execute();
        await sql`INSERT INTO no_such_table VALUES (1)`.execute(db);
      },
    },
  };
  let thrown: unknown;
  try {
    await migrateToLatest(opened.db, opened.path, upgrade);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(DatabaseOpenError);
  expect((thrown as Error).message).toContain("migration 9001_fails_halfway failed");
  await opened.close();
  expect(tables(opened.path)).toEqual(before);
  const applied = new Database(opened.path, { readonly: true });
  expect(applied.query("SELECT name FROM kysely_migration ORDER BY name").all()).toEqual(
    Object.keys(migrations)
      .sort()
      .map((name) => ({ name })),
  );
  applied.close();
  // The same binary still opens it: nothing half-applied is left behind.
  await (await openDatabase(dir)).close();
});

test("a database with a migration this svc does not know is refused, untouched", async () => {
  const future = join(dir, "future");
  await (await openDatabase(future)).close();
  const db = new Database(join(future, "svc.sqlite"));
  db.run("INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_from_a_newer_svc', '2030-01-01T00:00:00.000Z')");
  db.close();
  const before = tables(join(future, "svc.sqlite"));
  await expect(openDatabase(future)).rejects.toThrow("was written by a newer version of svc");
  expect(tables(join(future, "svc.sqlite"))).toEqual(before);
});
