// Schedules (and the one row per schedule and due time that makes a tick fire once), alert channels, alert state
// per subject, and the outbox of alert deliveries. Runs and group runs remember the schedule that started them.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("runs").addColumn("schedule_id", "text").execute();
  await db.schema.alterTable("group_runs").addColumn("schedule_id", "text").execute();
  await db.schema
    .createTable("schedules")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("target", "text", (c) => c.notNull())
    .addColumn("environment_id", "text")
    .addColumn("cron", "text")
    .addColumn("timezone", "text")
    .addColumn("interval_seconds", "integer")
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("next_run_at", "text")
    .addColumn("last_fired_at", "text")
    .addColumn("last_error", "text")
    .addColumn("created_by", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("schedules_due").on("schedules").columns(["enabled", "next_run_at"]).execute();
  await db.schema.createIndex("schedules_project").on("schedules").columns(["project_id", "created_at"]).execute();
  await db.schema
    .createTable("schedule_fires")
    .addColumn("schedule_id", "text", (c) => c.notNull().references("schedules.id").onDelete("cascade"))
    .addColumn("due_at", "text", (c) => c.notNull())
    .addColumn("fired_at", "text", (c) => c.notNull())
    .addColumn("run_id", "text")
    .addColumn("group_run_id", "text")
    .addColumn("error", "text")
    .addPrimaryKeyConstraint("schedule_fires_once", ["schedule_id", "due_at"])
    .execute();
  await db.schema
    .createTable("alert_channels")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("url", "text")
    .addColumn("secret", "text")
    .addColumn("email_to", "text")
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("remind_every", "integer")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("alert_channels_project").on("alert_channels").columns(["project_id", "created_at"]).execute();
  await db.schema
    .createTable("alert_states")
    .addColumn("subject_key", "text", (c) => c.primaryKey())
    .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("since", "text", (c) => c.notNull())
    .addColumn("last_run_id", "text")
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("alert_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("channel_id", "text", (c) => c.notNull().references("alert_channels.id").onDelete("cascade"))
    .addColumn("project_id", "text", (c) => c.notNull())
    .addColumn("subject_key", "text", (c) => c.notNull())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("error", "text")
    .addColumn("next_attempt_at", "text")
    .addColumn("delivered_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("alert_deliveries_due").on("alert_deliveries").columns(["status", "next_attempt_at"]).execute();
  await db.schema.createIndex("alert_deliveries_channel").on("alert_deliveries").columns(["channel_id", "created_at"]).execute();
  await db.schema.createIndex("alert_deliveries_subject").on("alert_deliveries").columns(["channel_id", "subject_key", "created_at"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("alert_deliveries").execute();
  await db.schema.dropTable("alert_states").execute();
  await db.schema.dropTable("alert_channels").execute();
  await db.schema.dropTable("schedule_fires").execute();
  await db.schema.dropTable("schedules").execute();
  await db.schema.alterTable("group_runs").dropColumn("schedule_id").execute();
  await db.schema.alterTable("runs").dropColumn("schedule_id").execute();
}
