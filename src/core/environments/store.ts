// The environments table: every query operations on environments need, typed by the schema.
import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DB, EnvironmentTable } from "../../db/schema";
import { sqlDialect } from "../storage";

type EnvRow = Selectable<EnvironmentTable>;

/** The environment of the project with that id (`env_…`) or else that name. */
export async function findEnvironmentByRef(db: Kysely<DB>, projectId: string, ref: string): Promise<EnvRow | undefined> {
  return db
    .selectFrom("environments")
    .selectAll()
    .where("project_id", "=", projectId)
    .where((eb) => (ref.startsWith("env_") ? eb("id", "=", ref) : eb("name", "=", ref)))
    .executeTakeFirst();
}

/** Whether another environment of the project (not `exceptId`) has that name. */
export async function environmentNameTaken(db: Kysely<DB>, projectId: string, name: string, exceptId?: string): Promise<boolean> {
  let q = db.selectFrom("environments").select("id").where("project_id", "=", projectId).where("name", "=", name);
  if (exceptId) q = q.where("id", "!=", exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** The project's environments, for `fetchPage`. */
export function environmentsQuery(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("environments").selectAll().where("project_id", "=", projectId);
}

export async function insertEnvironment(db: Kysely<DB>, row: Insertable<EnvironmentTable>): Promise<void> {
  await db.insertInto("environments").values(row).execute();
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function updateEnvironment(db: Kysely<DB>, id: string, patch: Updateable<EnvironmentTable>, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.updateTable("environments").set(patch).where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function deleteEnvironment(db: Kysely<DB>, id: string, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.deleteFrom("environments").where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
}

/** The name of one protected environment among `ids`, if any is. */
export async function protectedEnvironmentAmong(db: Kysely<DB>, ids: string[]): Promise<string | undefined> {
  const row = await db.selectFrom("environments").select("name").where("id", "in", ids).where("protected", "=", 1).executeTakeFirst();
  return row?.name;
}

/** One environment whose secrets are sealed and not empty (to check the key against), if there is one. */
export async function sealedSecretsSample(db: Kysely<DB>): Promise<Pick<EnvRow, "id" | "secrets" | "secrets_sealed"> | undefined> {
  return db
    .selectFrom("environments")
    .select(["id", "secrets", "secrets_sealed"])
    .where("secrets_sealed", "=", 1)
    .where("secrets", "!=", "{}")
    .limit(1)
    .executeTakeFirst();
}

/** The environments whose secrets are still stored in plain text. */
export async function plainSecretRows(db: Kysely<DB>): Promise<Pick<EnvRow, "id" | "secrets">[]> {
  return db.selectFrom("environments").select(["id", "secrets"]).where("secrets_sealed", "=", 0).execute();
}

/** Stores the sealed secrets of an environment that was still in plain text (left alone if it is not any more). */
export async function storeSealedSecrets(db: Kysely<DB>, id: string, secrets: string): Promise<void> {
  await db.updateTable("environments").set({ secrets, secrets_sealed: 1 }).where("id", "=", id).where("secrets_sealed", "=", 0).execute();
}

/** Runs `work` with freed pages overwritten, then truncates the write-ahead log, so replaced values do not stay in the files. */
export async function erasingReplacedValues(db: Kysely<DB>, work: () => Promise<void>): Promise<void> {
  // PostgreSQL has no such switch: replaced row versions go at its next vacuum (see docs/operations.md).
  if (sqlDialect(db) === "postgres") return work();
  await sql`PRAGMA secure_delete = ON`.execute(db);
  try {
    await work();
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
  } finally {
    await sql`PRAGMA secure_delete = OFF`.execute(db);
  }
}

/** The environments among `ids`, with what a run's per-run variables are checked against (their secrets' names). */
export async function environmentsAmong(db: Kysely<DB>, ids: string[]): Promise<Pick<EnvRow, "id" | "name" | "secrets">[]> {
  if (ids.length === 0) return [];
  return db.selectFrom("environments").select(["id", "name", "secrets"]).where("id", "in", ids).execute();
}

/** The runner labels these environments require, as stored (JSON arrays). */
export async function runnerLabelsOf(db: Kysely<DB>, ids: string[]): Promise<Pick<EnvRow, "id" | "runner_labels">[]> {
  if (ids.length === 0) return [];
  return db.selectFrom("environments").select(["id", "runner_labels"]).where("id", "in", ids).execute();
}
