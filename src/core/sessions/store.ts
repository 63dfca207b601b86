// The sessions table: every query web sign-in sessions need, typed by the schema.
import type { Insertable, Kysely } from "kysely";
import type { DB, SessionTable } from "../../db/schema";

/** Ends every session of a user in a workspace (their membership there is gone). */
export async function deleteSessionsOf(db: Kysely<DB>, workspaceId: string, userId: string): Promise<void> {
  await db.deleteFrom("sessions").where("workspace_id", "=", workspaceId).where("user_id", "=", userId).execute();
}

export async function insertSession(db: Kysely<DB>, row: Insertable<SessionTable>): Promise<void> {
  await db.insertInto("sessions").values(row).execute();
}

export async function deleteSessionsExpiredBy(db: Kysely<DB>, at: string): Promise<void> {
  await db.deleteFrom("sessions").where("expires_at", "<=", at).execute();
}

/** The session whose token has this hash, with the role of its membership (none once the membership is gone). */
export async function findSessionByTokenHash(db: Kysely<DB>, tokenHash: string) {
  return db
    .selectFrom("sessions as s")
    .innerJoin("memberships as m", (j) => j.onRef("m.user_id", "=", "s.user_id").onRef("m.workspace_id", "=", "s.workspace_id"))
    .select(["s.id", "s.user_id", "s.workspace_id", "s.csrf_token", "s.expires_at", "m.role"])
    .where("s.token_hash", "=", tokenHash)
    .executeTakeFirst();
}

export async function setSessionWorkspace(db: Kysely<DB>, id: string, workspaceId: string): Promise<void> {
  await db.updateTable("sessions").set({ workspace_id: workspaceId }).where("id", "=", id).execute();
}

export async function deleteSession(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom("sessions").where("id", "=", id).execute();
}
