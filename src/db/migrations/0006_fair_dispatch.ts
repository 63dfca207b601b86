// Claiming in turns (fair between workspaces and projects) reads the first queued runs of each project in order.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("runs_queue").on("runs").columns(["status", "project_id", "created_at", "position", "id"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("runs_queue").execute();
}
