// The queries of run artifacts (table run_artifacts): bytes (or the key of the object holding them) kept with their
// run, removed with it (ON DELETE CASCADE); the objects of removed rows wait in artifact_deletions.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";

/**
 * Keeps (or replaces: a retried attempt takes its screenshot again) one artifact of a run: its bytes, or, when it is
 * an object in the bucket, its key and size with empty bytes. A pending deletion of that key is dropped: the object
 * was just written again.
 */
export async function putArtifact(
  db: Kysely<DB>,
  a: { runId: string; name: string; bytes: Uint8Array; size: number; objectKey: string | null },
  at: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto("run_artifacts")
      .values({ run_id: a.runId, name: a.name, bytes: a.bytes, size: a.size, created_at: at, object_key: a.objectKey })
      .onConflict((oc) => oc.columns(["run_id", "name"]).doUpdateSet({ bytes: a.bytes, size: a.size, created_at: at, object_key: a.objectKey }))
      .execute();
    if (a.objectKey !== null) await trx.deleteFrom("artifact_deletions").where("object_key", "=", a.objectKey).execute();
  });
}

/** Keeps an artifact moved in from the disk, unless the run already has one of that name. */
export async function putArtifactIfAbsent(db: Kysely<DB>, runId: string, name: string, bytes: Uint8Array, at: string): Promise<void> {
  await db
    .insertInto("run_artifacts")
    .values({ run_id: runId, name, bytes, size: bytes.byteLength, created_at: at })
    .onConflict((oc) => oc.columns(["run_id", "name"]).doNothing())
    .execute();
}

/** An artifact's bytes, or the key of the object holding them. */
export async function readArtifact(db: Kysely<DB>, runId: string, name: string): Promise<{ bytes: Uint8Array; object_key: string | null } | undefined> {
  return db.selectFrom("run_artifacts").select(["bytes", "object_key"]).where("run_id", "=", runId).where("name", "=", name).executeTakeFirst();
}

/**
 * Objects to delete whose time has come (a note's `created_at` is when it may be acted on: at once for a removed
 * row, later for a write that failed and may still land, or for a delete to try again), oldest first.
 */
export async function dueObjectDeletions(db: Kysely<DB>, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom("artifact_deletions")
    .select("object_key")
    .where("created_at", "<=", now)
    .orderBy("created_at")
    .orderBy("object_key")
    .limit(limit)
    .execute();
  return rows.map((r) => r.object_key);
}

/** Notes objects to delete once `dueAt` has come (a note already there takes the later time). */
export async function noteObjectDeletions(db: Kysely<DB>, keys: string[], dueAt: string): Promise<void> {
  if (keys.length === 0) return;
  await db
    .insertInto("artifact_deletions")
    .values(keys.map((object_key) => ({ object_key, created_at: dueAt })))
    .onConflict((oc) => oc.column("object_key").doUpdateSet({ created_at: dueAt }))
    .execute();
}

/** Which of these keys an artifact row still names: such an object is never deleted. */
export async function objectKeysInUse(db: Kysely<DB>, keys: string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db.selectFrom("run_artifacts").select("object_key").where("object_key", "in", keys).execute();
  return new Set(rows.map((r) => r.object_key as string));
}

/** The objects are deleted from the bucket (or are not this installation's to delete): nothing is left to do for them. */
export async function forgetObjectDeletions(db: Kysely<DB>, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await db.deleteFrom("artifact_deletions").where("object_key", "in", keys).execute();
}

/** Which of these ids are runs (artifacts on disk of a run that is gone are not moved in). */
export async function existingRunIds(db: Kysely<DB>, ids: string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom("runs")
      .select("id")
      .where("id", "in", ids.slice(i, i + 500))
      .execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}
