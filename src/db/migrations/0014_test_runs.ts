// Schedules and alert channels made by `svc apply` carry the key that identifies them within their project, as
// automations, groups and environments do (0011).
import type { Kysely } from "kysely";

const TABLES = ["schedules", "alert_channels"] as const;

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
