// The queries of run artifacts (table run_artifacts): bytes kept with their run, removed with it (ON DELETE CASCADE).
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";

/** Keeps (or replaces: a retried attempt takes its screenshot again) one artifact of a run. */
export async function putArtifact(db: Kysely<DB>, runId: string, name: string, bytes: Uint8Array, at: string): Promise<void> {
  await db
    .insertInto("run_artifacts")
    .values({ run_id: runId, name, bytes, size: bytes.byteLength, created_at: at })
    .onConflict((oc) => oc.columns(["run_id", "name"]).doUpdateSet({ bytes, size: bytes.byteLength, created_at: at }))
    .execute();
}

/** Keeps an artifact moved in from the disk, unless the run already has one of that name. */
export async function putArtifactIfAbsent(db: Kysely<DB>, runId: string, name: string, bytes: Uint8Array, at: string): Promise<void> {
  await db
    .insertInto("run_artifacts")
    .values({ run_id: runId, name, bytes, size: bytes.byteLength, created_at: at })
    .onConflict((oc) => oc.columns(["run_id", "name"]).doNothing())
    .execute();
}

export async function readArtifact(db: Kysely<DB>, runId: string, name: string): Promise<Uint8Array | undefined> {
  return (await db.selectFrom("run_artifacts").select("bytes").where("run_id", "=", runId).where("name", "=", name).executeTakeFirst())?.bytes;
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
