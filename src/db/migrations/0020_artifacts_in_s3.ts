// Run artifacts may live in an S3-compatible bucket (`[artifacts.s3]`): their row keeps the name, size and the
// object's key (`object_key`, with empty `bytes`); a row without one keeps its bytes as before. When such a row goes
// (retention, a deleted run, project or workspace: ON DELETE CASCADE), a trigger notes its object's key in
// `artifact_deletions`, in the same transaction, and the artifacts engine deletes the objects from there: no object
// outlives its row unnoticed, whatever removed the row.
import { type Kysely, PostgresAdapter, sql } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("run_artifacts").addColumn("object_key", "text").execute();
  await db.schema
    .createTable("artifact_deletions")
    .addColumn("object_key", "text", (c) => c.primaryKey())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`CREATE OR REPLACE FUNCTION svc_note_artifact_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO artifact_deletions (object_key, created_at)
          VALUES (OLD.object_key, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          ON CONFLICT (object_key) DO NOTHING;
        RETURN NULL;
      END $$`.execute(db);
    await sql`CREATE TRIGGER run_artifacts_object_deleted AFTER DELETE ON run_artifacts
      FOR EACH ROW WHEN (OLD.object_key IS NOT NULL) EXECUTE FUNCTION svc_note_artifact_deletion()`.execute(db);
  } else {
    await sql`CREATE TRIGGER run_artifacts_object_deleted AFTER DELETE ON run_artifacts
      FOR EACH ROW WHEN OLD.object_key IS NOT NULL
      BEGIN
        INSERT OR IGNORE INTO artifact_deletions (object_key, created_at) VALUES (OLD.object_key, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
      END`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS run_artifacts_object_deleted${db.getExecutor().adapter instanceof PostgresAdapter ? sql` ON run_artifacts` : sql``}`.execute(
    db,
  );
  await db.schema.dropTable("artifact_deletions").execute();
  await db.schema.alterTable("run_artifacts").dropColumn("object_key").execute();
}
