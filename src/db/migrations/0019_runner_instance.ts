// Which `svc runner` process holds a runner's token (a random id each process makes when it starts): a second
// process on the same token is refused while the first is heard from, instead of the two overwriting each other.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("runners").addColumn("instance_id", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("runners").dropColumn("instance_id").execute();
}
