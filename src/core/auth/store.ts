// The api_keys rows as key verification reads and stamps them, typed by the schema.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";

/** The unrevoked key with this hash, with the role of its holder's membership (none once the membership is gone). */
export async function findLiveKeyByHash(db: Kysely<DB>, hash: string) {
  return db
    .selectFrom("api_keys as k")
    .innerJoin("memberships as m", (j) => j.onRef("m.workspace_id", "=", "k.workspace_id").onRef("m.user_id", "=", "k.user_id"))
    .select(["k.id", "k.user_id", "k.workspace_id", "k.hash", "k.expires_at", "m.role"])
    .where("k.hash", "=", hash)
    .where("k.revoked_at", "is", null)
    .executeTakeFirst();
}

export async function setKeyLastUsed(db: Kysely<DB>, id: string, at: string): Promise<void> {
  await db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", id).execute();
}
