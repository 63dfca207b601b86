// The sessions table: every query web sign-in sessions need, typed by the schema.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";

/** Ends every session of a user in a workspace (their membership there is gone). */
export async function deleteSessionsOf(db: Kysely<DB>, workspaceId: string, userId: string): Promise<void> {
  await db.deleteFrom("sessions").where("workspace_id", "=", workspaceId).where("user_id", "=", userId).execute();
}
