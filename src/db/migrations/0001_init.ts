// The first schema: every table of the foundation.
import type { CreateTableBuilder, Kysely } from "kysely";

const stamps = <T extends string, C extends string>(t: CreateTableBuilder<T, C>) =>
  t.addColumn("created_at", "text", (c) => c.notNull()).addColumn("updated_at", "text", (c) => c.notNull());

export async function up(db: Kysely<unknown>): Promise<void> {
  await stamps(
    db.schema
      .createTable("workspaces")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("slug", "text", (c) => c.notNull().unique()),
  ).execute();

  await stamps(
    db.schema
      .createTable("users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("email", "text", (c) => c.notNull().unique())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("password_hash", "text")
      .addColumn("setup_token_hash", "text")
      .addColumn("setup_token_expires_at", "text"),
  ).execute();

  await db.schema
    .createTable("memberships")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("memberships_pk", ["workspace_id", "user_id"])
    .execute();

  await stamps(
    db.schema
      .createTable("api_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id").onDelete("cascade"))
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("prefix", "text", (c) => c.notNull())
      .addColumn("hash", "text", (c) => c.notNull().unique())
      .addColumn("last_used_at", "text")
      .addColumn("expires_at", "text")
      .addColumn("revoked_at", "text"),
  ).execute();
  await db.schema.createIndex("api_keys_user").on("api_keys").columns(["workspace_id", "user_id"]).execute();

  await db.schema
    .createTable("sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id").onDelete("cascade"))
    .addColumn("csrf_token", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("expires_at", "text", (c) => c.notNull())
    .execute();

  await stamps(
    db.schema
      .createTable("projects")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id").onDelete("cascade"))
      .addColumn("slug", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("openapi", "text")
      .addUniqueConstraint("projects_slug", ["workspace_id", "slug"]),
  ).execute();

  await stamps(
    db.schema
      .createTable("environments")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("variables", "text", (c) => c.notNull())
      .addColumn("secrets", "text", (c) => c.notNull())
      .addUniqueConstraint("environments_name", ["project_id", "name"]),
  ).execute();

  await stamps(
    db.schema
      .createTable("features")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("acceptance_criteria", "text", (c) => c.notNull())
      .addColumn("target", "text"),
  ).execute();
  await db.schema.createIndex("features_project").on("features").columns(["project_id", "created_at"]).execute();

  await stamps(
    db.schema
      .createTable("generations")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("feature_id", "text", (c) => c.notNull().references("features.id").onDelete("cascade"))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("strategy", "text", (c) => c.notNull())
      .addColumn("progress", "text", (c) => c.notNull())
      .addColumn("warnings", "text", (c) => c.notNull())
      .addColumn("automation_ids", "text", (c) => c.notNull())
      .addColumn("result", "text")
      .addColumn("error", "text")
      .addColumn("started_at", "text")
      .addColumn("finished_at", "text"),
  ).execute();
  await db.schema.createIndex("generations_feature").on("generations").columns(["feature_id", "created_at"]).execute();
  await db.schema.createIndex("generations_status").on("generations").columns(["status", "created_at"]).execute();

  await stamps(
    db.schema
      .createTable("automations")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("feature_id", "text", (c) => c.references("features.id").onDelete("set null"))
      .addColumn("generation_id", "text")
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("steps", "text", (c) => c.notNull())
      .addColumn("environment_id", "text", (c) => c.references("environments.id").onDelete("set null"))
      .addColumn("tags", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("source", "text", (c) => c.notNull())
      .addColumn("edited", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("timeout_ms", "integer", (c) => c.notNull())
      .addColumn("retries", "integer", (c) => c.notNull())
      .addColumn("last_run_id", "text")
      .addColumn("last_run_status", "text")
      .addColumn("last_run_at", "text"),
  ).execute();
  await db.schema.createIndex("automations_project").on("automations").columns(["project_id", "created_at"]).execute();

  await stamps(
    db.schema
      .createTable("groups")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("automation_ids", "text", (c) => c.notNull()),
  ).execute();

  await stamps(
    db.schema
      .createTable("group_runs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("group_id", "text")
      .addColumn("group_name", "text", (c) => c.notNull())
      .addColumn("trigger", "text", (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex("group_runs_project").on("group_runs").columns(["project_id", "created_at"]).execute();

  await stamps(
    db.schema
      .createTable("runs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("automation_id", "text", (c) => c.notNull())
      .addColumn("automation_name", "text", (c) => c.notNull())
      .addColumn("group_run_id", "text")
      .addColumn("environment_id", "text")
      .addColumn("trigger", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("spec", "text", (c) => c.notNull())
      .addColumn("attempts", "text", (c) => c.notNull())
      .addColumn("started_at", "text")
      .addColumn("finished_at", "text")
      .addColumn("duration_ms", "integer")
      .addColumn("summary", "text", (c) => c.notNull())
      .addColumn("error", "text")
      .addColumn("results", "text", (c) => c.notNull())
      .addColumn("claim", "integer", (c) => c.notNull().defaultTo(0)),
  ).execute();
  await db.schema.createIndex("runs_project").on("runs").columns(["project_id", "created_at"]).execute();
  await db.schema.createIndex("runs_automation").on("runs").columns(["automation_id", "created_at"]).execute();
  await db.schema.createIndex("runs_group_run").on("runs").columns(["group_run_id"]).execute();
  await db.schema.createIndex("runs_status").on("runs").columns(["status", "created_at"]).execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("operation", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("status", "integer", (c) => c.notNull())
    .addColumn("response", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_pk", ["workspace_id", "operation", "key"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    "idempotency_keys",
    "runs",
    "group_runs",
    "groups",
    "automations",
    "generations",
    "features",
    "environments",
    "projects",
    "sessions",
    "api_keys",
    "memberships",
    "users",
    "workspaces",
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
