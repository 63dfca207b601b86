// The features table: every query operations on features need, typed by the schema.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DB, FeatureTable } from "../../db/schema";

export async function findFeature(db: Kysely<DB>, projectId: string, id: string): Promise<Selectable<FeatureTable> | undefined> {
  return db.selectFrom("features").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

/** Up to `limit` features of the project with exactly that name, oldest first. */
export async function featuresNamed(db: Kysely<DB>, projectId: string, name: string, limit: number): Promise<Selectable<FeatureTable>[]> {
  return db
    .selectFrom("features")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** The features `ref` names in the project: the one with that id, else up to `limit` with exactly that name. */
export async function featuresByRef(db: Kysely<DB>, projectId: string, ref: string, limit: number): Promise<Selectable<FeatureTable>[]> {
  const byId = await findFeature(db, projectId, ref);
  return byId ? [byId] : featuresNamed(db, projectId, ref, limit);
}

/** The project's features, for `fetchPage`. */
export function featuresQuery(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("features").selectAll().where("project_id", "=", projectId);
}

export async function insertFeature(db: Kysely<DB>, row: Insertable<FeatureTable>): Promise<void> {
  await db.insertInto("features").values(row).execute();
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function updateFeature(db: Kysely<DB>, id: string, patch: Updateable<FeatureTable>, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.updateTable("features").set(patch).where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function deleteFeature(db: Kysely<DB>, id: string, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.deleteFrom("features").where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
}

/** The ids of the feature's generations still queued or running. */
export async function activeGenerationIds(db: Kysely<DB>, featureId: string): Promise<string[]> {
  const rows = await db.selectFrom("generations").select("id").where("feature_id", "=", featureId).where("status", "in", ["queued", "running"]).execute();
  return rows.map((r) => r.id);
}
