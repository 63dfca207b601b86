// The groups table: every query operations on groups need, typed by the schema.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DB, GroupTable } from "../../db/schema";

export async function findGroup(db: Kysely<DB>, projectId: string, id: string): Promise<Selectable<GroupTable> | undefined> {
  return db.selectFrom("groups").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

/** Up to `limit` groups of the project with exactly that name, oldest first. */
export async function groupsNamed(db: Kysely<DB>, projectId: string, name: string, limit: number): Promise<Selectable<GroupTable>[]> {
  return db
    .selectFrom("groups")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** Every group of the project with its member list (as stored, JSON). */
export async function groupMemberLists(db: Kysely<DB>, projectId: string): Promise<Pick<Selectable<GroupTable>, "id" | "automation_ids">[]> {
  return db.selectFrom("groups").select(["id", "automation_ids"]).where("project_id", "=", projectId).execute();
}

/** The project's groups, for `fetchPage`. */
export function groupsQuery(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("groups").selectAll().where("project_id", "=", projectId);
}

export async function insertGroup(db: Kysely<DB>, row: Insertable<GroupTable>): Promise<void> {
  await db.insertInto("groups").values(row).execute();
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function updateGroup(db: Kysely<DB>, id: string, patch: Updateable<GroupTable>, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.updateTable("groups").set(patch).where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function deleteGroup(db: Kysely<DB>, id: string, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.deleteFrom("groups").where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
}
