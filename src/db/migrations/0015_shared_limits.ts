// What several nodes on one database share beyond the data: the request-budget token buckets (kept in the
// database on PostgreSQL, so every node takes from the same budget) and instance settings such as the secrets
// key check the first node writes.
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("rate_limit_buckets")
    .addColumn("bucket", "text", (c) => c.primaryKey())
    // In 1/3,600,000 of a token: a budget of N an hour refills exactly N of these a millisecond.
    .addColumn("tokens", "bigint", (c) => c.notNull())
    .addColumn("updated_ms", "bigint", (c) => c.notNull())
    // Whether the last take was granted (1) or refused (0).
    .addColumn("taken", "integer", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("rate_limit_buckets_updated").on("rate_limit_buckets").column("updated_ms").execute();
  await db.schema
    .createTable("instance_settings")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("instance_settings").execute();
  await db.schema.dropTable("rate_limit_buckets").execute();
}
