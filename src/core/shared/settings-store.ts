// The instance_settings table: settings of the installation every node reads, each written once by the first.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";

export async function findSetting(db: Kysely<DB>, name: string): Promise<string | undefined> {
  const row = await db.selectFrom("instance_settings").select("value").where("name", "=", name).executeTakeFirst();
  return row?.value;
}

/** Writes the setting unless it is there already (another node's first start came first); answers the value kept. */
export async function keepSettingOnce(db: Kysely<DB>, name: string, value: string, createdAt: string): Promise<string> {
  await db
    .insertInto("instance_settings")
    .values({ name, value, created_at: createdAt })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  return (await findSetting(db, name)) ?? value;
}
