// The idempotency_keys table: every query idempotent starts need, typed by the schema.
import type { Insertable, Kysely, Selectable } from "kysely";
import type { DB, IdempotencyTable } from "../../db/schema";

/** Which record: the workspace, the operation with the resource it acts on, and the client's key. */
export type IdempotencyRecordKey = Pick<IdempotencyTable, "workspace_id" | "operation" | "key">;

export async function findIdempotencyRecord(
  db: Kysely<DB>,
  where: IdempotencyRecordKey,
): Promise<Pick<Selectable<IdempotencyTable>, "status" | "response" | "created_at"> | undefined> {
  return db
    .selectFrom("idempotency_keys")
    .select(["status", "response", "created_at"])
    .where("workspace_id", "=", where.workspace_id)
    .where("operation", "=", where.operation)
    .where("key", "=", where.key)
    .executeTakeFirst();
}

/** Inserts the record unless one with its key exists; answers whether it did. */
export async function claimIdempotencyKey(db: Kysely<DB>, row: Insertable<IdempotencyTable>): Promise<boolean> {
  const claimed = await db
    .insertInto("idempotency_keys")
    .values(row)
    .onConflict((oc) => oc.columns(["workspace_id", "operation", "key"]).doNothing())
    .executeTakeFirst();
  return Number(claimed.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function saveIdempotentAnswer(
  db: Kysely<DB>,
  where: IdempotencyRecordKey,
  answer: Pick<IdempotencyTable, "status" | "response" | "created_at">,
): Promise<void> {
  await db
    .updateTable("idempotency_keys")
    .set(answer)
    .where("workspace_id", "=", where.workspace_id)
    .where("operation", "=", where.operation)
    .where("key", "=", where.key)
    .execute();
}

export async function deleteIdempotencyRecordsBefore(db: Kysely<DB>, cutoff: string): Promise<void> {
  await db.deleteFrom("idempotency_keys").where("created_at", "<", cutoff).execute();
}
