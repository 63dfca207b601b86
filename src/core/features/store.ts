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

/** The project's features, for `fetchPage`. */
export function featuresQuery(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("features").selectAll().where("project_id", "=", projectId);
}

export async function insertFeature(db: Kysely<DB>, row: Insertable<FeatureTable>): Promise<void> {
  await db.insertInto("features").values(row).execute();
}

export async function updateFeature(db: Kysely<DB>, id: string, patch: Updateable<FeatureTable>): Promise<void> {
  await db.updateTable("features").set(patch).where("id", "=", id).execute();
}

export async function deleteFeature(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom("features").where("id", "=", id).execute();
}

/** The ids of the feature's generations still queued or running. */
export async function activeGenerationIds(db: Kysely<DB>, featureId: string): Promise<string[]> {
  const rows = await db.selectFrom("generations").select("id").where("feature_id", "=", featureId).where("status", "in", ["queued", "running"]).execute();
  return rows.map((r) => r.id);
}
