// Tests as code: records made by `svc apply` carry the key that identifies them within their project (the
// document's `key:`, else its path relative to the applied folder).
import type { Kysely } from "kysely";

const TABLES = ["automations", "groups", "environments"] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const t of TABLES) {
    await db.schema.alterTable(t).addColumn("key", "text").execute();
    await db.schema.createIndex(`${t}_key`).on(t).columns(["project_id", "key"]).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of TABLES) {
    await db.schema.dropIndex(`${t}_key`).execute();
    await db.schema.alterTable(t).dropColumn("key").execute();
  }
}
