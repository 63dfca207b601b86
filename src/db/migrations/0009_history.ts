// History that survives retention: daily roll-ups per automation, quarantine, a run's roll-up mark, and a group
// run's verdict stored when it ends (so pruning never changes it).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("automations")
    .addColumn("quarantined", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("runs")
    .addColumn("quarantined", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  // 0 until the finished run is counted in run_daily; runs recorded before this migration are counted by the next sweep.
  await db.schema
    .alterTable("runs")
    .addColumn("rolled_up", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex("runs_rolled_up").on("runs").columns(["rolled_up", "status"]).execute();
  await db.schema.createIndex("runs_created").on("runs").columns(["created_at"]).execute();
  await db.schema.alterTable("group_runs").addColumn("status", "text").execute();
  await db.schema.alterTable("group_runs").addColumn("summary", "text").execute();
  await db.schema.alterTable("group_runs").addColumn("started_at", "text").execute();
  await db.schema.alterTable("group_runs").addColumn("finished_at", "text").execute();
  await db.schema
    .createTable("run_daily")
    .addColumn("automation_id", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("runs", "integer", (c) => c.notNull())
    .addColumn("passed", "integer", (c) => c.notNull())
    .addColumn("failed", "integer", (c) => c.notNull())
    .addColumn("flaky", "integer", (c) => c.notNull())
    .addColumn("durations", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("run_daily_pk", ["automation_id", "day"])
    .execute();
  await db.schema.createIndex("run_daily_project").on("run_daily").columns(["project_id", "day"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("run_daily").execute();
  for (const c of ["finished_at", "started_at", "summary", "status"]) await db.schema.alterTable("group_runs").dropColumn(c).execute();
  await db.schema.dropIndex("runs_created").execute();
  await db.schema.dropIndex("runs_rolled_up").execute();
  await db.schema.alterTable("runs").dropColumn("rolled_up").execute();
  await db.schema.alterTable("runs").dropColumn("quarantined").execute();
  await db.schema.alterTable("automations").dropColumn("quarantined").execute();
}
