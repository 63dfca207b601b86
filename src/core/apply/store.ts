// What `svc apply` reads: the project's records that carry a key (applied records), and adoptable ones by id.
import type { Kysely, Selectable } from "kysely";
import type { AlertChannelTable, AutomationTable, DB, EnvironmentTable, GroupTable, ScheduleTable } from "../../db/schema";

export async function keyedAutomations(db: Kysely<DB>, projectId: string): Promise<Selectable<AutomationTable>[]> {
  return db.selectFrom("automations").selectAll().where("project_id", "=", projectId).where("key", "is not", null).execute();
}

export async function keyedGroups(db: Kysely<DB>, projectId: string): Promise<Selectable<GroupTable>[]> {
  return db.selectFrom("groups").selectAll().where("project_id", "=", projectId).where("key", "is not", null).execute();
}

export async function keyedEnvironments(db: Kysely<DB>, projectId: string): Promise<Selectable<EnvironmentTable>[]> {
  return db.selectFrom("environments").selectAll().where("project_id", "=", projectId).where("key", "is not", null).execute();
}

/** Every environment of the project (names are unique), to resolve names and refuse a clash. */
export async function allEnvironments(db: Kysely<DB>, projectId: string): Promise<Selectable<EnvironmentTable>[]> {
  return db.selectFrom("environments").selectAll().where("project_id", "=", projectId).execute();
}

/** Every automation of the project, light and oldest first: to adopt one by id and to see name clashes. */
export async function automationNames(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("automations").select(["id", "name", "key"]).where("project_id", "=", projectId).orderBy("created_at").orderBy("id").execute();
}

export async function groupNames(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("groups").select(["id", "name", "key"]).where("project_id", "=", projectId).orderBy("created_at").orderBy("id").execute();
}

export async function findUnkeyed<T extends "automations" | "groups" | "environments">(db: Kysely<DB>, table: T, projectId: string, id: string) {
  return db
    .selectFrom(table as "automations")
    .select("id")
    .where("project_id", "=", projectId)
    .where("id", "=", id)
    .where("key", "is", null)
    .executeTakeFirst();
}

/** Every schedule of the project: applied ones by key, and unkeyed ones to adopt by name. */
export async function allSchedules(db: Kysely<DB>, projectId: string): Promise<Selectable<ScheduleTable>[]> {
  return db.selectFrom("schedules").selectAll().where("project_id", "=", projectId).orderBy("created_at").orderBy("id").execute();
}

/** Every alert channel of the project: applied ones by key, and unkeyed ones to adopt by name. */
export async function allAlertChannels(db: Kysely<DB>, projectId: string): Promise<Selectable<AlertChannelTable>[]> {
  return db.selectFrom("alert_channels").selectAll().where("project_id", "=", projectId).orderBy("created_at").orderBy("id").execute();
}
