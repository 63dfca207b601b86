// The automations table: every query operations on automations need, typed by the schema.
import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { AutomationTable, DB } from "../../db/schema";
import { oneOf } from "../shared/id-lists-store";

type AutomationRow = Selectable<AutomationTable>;

export async function findAutomation(db: Kysely<DB>, projectId: string, id: string): Promise<AutomationRow | undefined> {
  return db.selectFrom("automations").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

/** The automations of these projects that are not disabled: their ids and projects. */
export async function enabledAutomationsOf(db: Kysely<DB>, projectIds: string[]): Promise<{ id: string; project_id: string }[]> {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom("automations")
    .select(["id", "project_id"])
    .where(oneOf(db, "project_id", projectIds))
    .where("status", "!=", "disabled")
    .execute();
}

/** Up to `limit` automations of the project with exactly that name, oldest first. */
export async function automationsNamed(db: Kysely<DB>, projectId: string, name: string, limit: number): Promise<AutomationRow[]> {
  return db
    .selectFrom("automations")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** The automations of the project among `ids`, in no particular order. */
export async function automationsAmong(db: Kysely<DB>, projectId: string, ids: string[]): Promise<AutomationRow[]> {
  if (ids.length === 0) return [];
  return db
    .selectFrom("automations")
    .selectAll()
    .where("project_id", "=", projectId)
    .where(oneOf(db, "id", ids))
    .execute();
}

/** The automations among `ids` that can run (those of the project, not disabled), in the order of `ids`. */
export async function runnableAmong(db: Kysely<DB>, projectId: string, ids: string[]): Promise<AutomationRow[]> {
  const rows = new Map((await automationsAmong(db, projectId, ids)).map((r) => [r.id, r]));
  return ids.map((id) => rows.get(id)).filter((r): r is AutomationRow => r !== undefined && r.status !== "disabled");
}

/** Which of `ids` name automations of the project. */
export async function existingAutomationIds(db: Kysely<DB>, projectId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom("automations").select("id").where("project_id", "=", projectId).where("id", "in", ids).execute();
  return new Set(rows.map((r) => r.id));
}

export interface AutomationFilter {
  featureId?: string;
  status?: AutomationRow["status"];
  kind?: AutomationRow["kind"];
  /** Matches name or description, case-insensitively, as plain text (no wildcards). */
  text?: string;
  /** Only these ids. */
  ids?: string[];
  /** Tagged with any of these, ignoring case (the tags column is a JSON array of strings). */
  tags?: string[];
}

const likeEscaped = (text: string) => text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);

/** The project's automations matching `filter`, for `fetchPage`. */
export function automationsQuery(db: Kysely<DB>, projectId: string, filter: AutomationFilter = {}) {
  let q = db.selectFrom("automations").selectAll().where("project_id", "=", projectId);
  if (filter.featureId !== undefined) q = q.where("feature_id", "=", filter.featureId);
  if (filter.status !== undefined) q = q.where("status", "=", filter.status);
  if (filter.kind !== undefined) q = q.where("kind", "=", filter.kind);
  if (filter.text !== undefined) {
    const like = `%${filter.text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where((eb) => eb.or([eb(sql`lower(name)`, "like", sql`${like} escape '\\'`), eb(sql`lower(description)`, "like", sql`${like} escape '\\'`)]));
  }
  if (filter.ids !== undefined) q = q.where("id", "in", filter.ids);
  const tags = filter.tags;
  if (tags !== undefined && tags.length > 0) {
    // A tag as the JSON array holds it, quotes included, so "smoke" never matches "smoke-test".
    q = q.where((eb) => eb.or(tags.map((t) => eb(sql`lower(tags)`, "like", sql`${`%${likeEscaped(JSON.stringify(t))}%`} escape '\\'`))));
  }
  return q;
}

/** Up to `limit` automations of the feature that can run (not disabled), oldest first. */
export async function runnableFeatureAutomations(db: Kysely<DB>, projectId: string, featureId: string, limit: number): Promise<AutomationRow[]> {
  return db
    .selectFrom("automations")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("feature_id", "=", featureId)
    .where("status", "!=", "disabled")
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** Changes every draft of the feature by `patch` and answers the changed rows as they are now. */
export async function updateFeatureDrafts(db: Kysely<DB>, projectId: string, featureId: string, patch: Updateable<AutomationTable>): Promise<AutomationRow[]> {
  return db
    .updateTable("automations")
    .set(patch)
    .where("project_id", "=", projectId)
    .where("feature_id", "=", featureId)
    .where("status", "=", "draft")
    .returningAll()
    .execute();
}

export async function insertAutomation(db: Kysely<DB>, row: Insertable<AutomationTable>): Promise<void> {
  await db.insertInto("automations").values(row).execute();
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function updateAutomation(db: Kysely<DB>, id: string, patch: Updateable<AutomationTable>, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.updateTable("automations").set(patch).where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function deleteAutomation(db: Kysely<DB>, id: string, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.deleteFrom("automations").where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
}

/** The feature's automations generated by other (earlier) generations. */
export async function earlierGeneratedAutomations(db: Kysely<DB>, featureId: string, generationId: string) {
  return db
    .selectFrom("automations")
    .select(["id", "project_id", "status", "edited"])
    .where("feature_id", "=", featureId)
    .where("source", "=", "generated")
    .where((eb) => eb.or([eb("generation_id", "is", null), eb("generation_id", "!=", generationId)]))
    .execute();
}

export async function deleteAutomations(db: Kysely<DB>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom("automations").where("id", "in", ids).execute();
}

/** The names the project's automations have, to keep a new one's unique. */
export async function automationNames(db: Kysely<DB>, projectId: string): Promise<Set<string>> {
  const rows = await db.selectFrom("automations").select("name").where("project_id", "=", projectId).execute();
  return new Set(rows.map((r) => r.name));
}
