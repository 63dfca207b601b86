// Run artifacts (screenshots and other files) move from one node's disk into the database, so every node serves
// them and backups and retention cover them with their runs. The bytes are a BLOB on SQLite and a bytea on
// PostgreSQL; the rows go with their run (ON DELETE CASCADE). Files already on disk are moved in at start
// (src/core/runs/artifacts.ts), not here: a migration sees the database, not the data directory.
import { type Kysely, PostgresAdapter } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? "bytea" : "blob";
  await db.schema
    .createTable("run_artifacts")
    .addColumn("run_id", "text", (c) => c.notNull().references("runs.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("bytes", bytes, (c) => c.notNull())
    .addColumn("size", "integer", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("run_artifacts_pk", ["run_id", "name"])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("run_artifacts").execute();
}
