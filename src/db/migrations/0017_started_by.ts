// Who or what started each run and group run (a person, an API key, a schedule, the assistant, the operator), as
// a small JSON object of kind and name kept with it; null for those started before.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("runs").addColumn("started_by", "text").execute();
  await db.schema.alterTable("group_runs").addColumn("started_by", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("group_runs").dropColumn("started_by").execute();
  await db.schema.alterTable("runs").dropColumn("started_by").execute();
}
