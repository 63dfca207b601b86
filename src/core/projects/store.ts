// The projects table: every query operations on projects need, typed by the schema.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DB, ProjectTable, RunTable } from "../../db/schema";

/** The project of the workspace with that id (`prj_…`) or else that slug. */
export async function findProjectByRef(db: Kysely<DB>, workspaceId: string, ref: string): Promise<Selectable<ProjectTable> | undefined> {
  return db
    .selectFrom("projects")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where((eb) => (ref.startsWith("prj_") ? eb("id", "=", ref) : eb("slug", "=", ref)))
    .executeTakeFirst();
}

/** Whether another project of the workspace (not `exceptId`) has that slug. */
export async function projectSlugTaken(db: Kysely<DB>, workspaceId: string, slug: string, exceptId?: string): Promise<boolean> {
  let q = db.selectFrom("projects").select("id").where("workspace_id", "=", workspaceId).where("slug", "=", slug);
  if (exceptId) q = q.where("id", "!=", exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** The workspace's projects, for `fetchPage`. */
export function projectsQuery(db: Kysely<DB>, workspaceId: string) {
  return db.selectFrom("projects").selectAll().where("workspace_id", "=", workspaceId);
}

export async function insertProject(db: Kysely<DB>, row: Insertable<ProjectTable>): Promise<void> {
  await db.insertInto("projects").values(row).execute();
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function updateProject(db: Kysely<DB>, id: string, patch: Updateable<ProjectTable>, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.updateTable("projects").set(patch).where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** The runs of the project, with their status (what deleting it must cancel and whose files it removes). */
export async function projectRuns(db: Kysely<DB>, projectId: string): Promise<Pick<Selectable<RunTable>, "id" | "status">[]> {
  return db.selectFrom("runs").select(["id", "status"]).where("project_id", "=", projectId).execute();
}

/** Deletes the project's runs, its group runs and then the project; answers whether the project row was deleted. */
export async function deleteProjectWithRuns(db: Kysely<DB>, projectId: string, ifUpdatedAt?: string): Promise<boolean> {
  await db.deleteFrom("runs").where("project_id", "=", projectId).execute();
  await db.deleteFrom("group_runs").where("project_id", "=", projectId).execute();
  await db.deleteFrom("run_daily").where("project_id", "=", projectId).execute();
  let q = db.deleteFrom("projects").where("id", "=", projectId);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  const res = await q.executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** The project's OpenAPI document of the system under test as stored, when it has one. */
export async function projectOpenapi(db: Kysely<DB>, projectId: string): Promise<string | null> {
  return (await db.selectFrom("projects").select("openapi").where("id", "=", projectId).executeTakeFirst())?.openapi ?? null;
}
