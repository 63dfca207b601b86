// Runners on other machines: their tokens (hashes only), the leases of the runs they hold, and the labels an
// environment requires of the runner that runs it.
import { type Kysely, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("runners")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("labels", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("workspace_id", "text", (c) => c.references("workspaces.id").onDelete("cascade"))
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .addColumn("last_seen_at", "text")
    .addColumn("version", "text")
    .addColumn("capabilities", "text")
    .addColumn("advertised_labels", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("revoked_at", "text")
    .execute();
  await db.schema.createIndex("runners_prefix").on("runners").column("prefix").execute();
  await db.schema.createIndex("runners_workspace").on("runners").columns(["workspace_id", "created_at"]).execute();
  await db.schema.alterTable("runs").addColumn("runner_id", "text").execute();
  await db.schema.alterTable("runs").addColumn("lease_expires_at", "text").execute();
  // Set when the runner holding the run began executing it: an expired lease requeues a run not yet begun.
  await db.schema.alterTable("runs").addColumn("runner_started_at", "text").execute();
  await db.schema
    .alterTable("runs")
    .addColumn("runner_losses", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`CREATE INDEX runs_leased ON runs (lease_expires_at) WHERE runner_id IS NOT NULL AND status = 'running'`.execute(db);
  await db.schema
    .alterTable("environments")
    .addColumn("runner_labels", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX runs_leased`.execute(db);
  for (const c of ["runner_id", "lease_expires_at", "runner_started_at", "runner_losses"]) await db.schema.alterTable("runs").dropColumn(c).execute();
  await db.schema.alterTable("environments").dropColumn("runner_labels").execute();
  await db.schema.dropTable("runners").execute();
}
