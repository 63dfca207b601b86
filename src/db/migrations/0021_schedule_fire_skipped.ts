// A schedule's due time at which its previous run (or group run) has not ended is skipped, not fired on top of it:
// its fire row says why in `skipped` (null for a due time that started runs, or could not).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("schedule_fires").addColumn("skipped", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("schedule_fires").dropColumn("skipped").execute();
}
