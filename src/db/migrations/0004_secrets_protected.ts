// Environments: secrets encrypted at rest (`secrets_sealed`), and protected environments with allowed hosts.
// Sealing needs the secrets key, which lives outside the database and is created at start: this migration
// marks every existing environment unsealed (0), and the start that follows seals them (src/core/environments/secrets.ts).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("environments")
    .addColumn("secrets_sealed", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("environments")
    .addColumn("protected", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("environments").addColumn("allowed_hosts", "text").execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("environments").dropColumn("allowed_hosts").execute();
  await db.schema.alterTable("environments").dropColumn("protected").execute();
  await db.schema.alterTable("environments").dropColumn("secrets_sealed").execute();
}
