// The runners table, and the runs-table writes of the runner protocol (claims, leases, release): every query runners need, typed by the schema.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DB, RunnerTable, RunTable } from "../../db/schema";

type RunRef = { id: string; claim: number };
type RunStatus = Selectable<RunTable>["status"];

export async function insertRunner(db: Kysely<DB>, row: Insertable<RunnerTable>): Promise<void> {
  await db.insertInto("runners").values(row).execute();
}

export async function updateRunner(db: Kysely<DB>, id: string, patch: Updateable<RunnerTable>): Promise<void> {
  await db.updateTable("runners").set(patch).where("id", "=", id).execute();
}

/**
 * Gives the runner's token to the process `instance` (its hello), with `patch`, unless another process holds it
 * and was heard from since `heardSince`; answers whether it did.
 */
export async function takeRunnerToken(
  db: Kysely<DB>,
  id: string,
  instance: string | null,
  heardSince: string,
  patch: Updateable<RunnerTable>,
): Promise<boolean> {
  let q = db
    .updateTable("runners")
    .set({ ...patch, instance_id: instance })
    .where("id", "=", id);
  if (instance !== null)
    q = q.where((eb) =>
      eb.or([eb("instance_id", "is", null), eb("instance_id", "=", instance), eb("last_seen_at", "is", null), eb("last_seen_at", "<", heardSince)]),
    );
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The process `instance` stops: the token is free for the next one at once. */
export async function letGoOfRunnerToken(db: Kysely<DB>, id: string, instance: string): Promise<void> {
  await db.updateTable("runners").set({ instance_id: null }).where("id", "=", id).where("instance_id", "=", instance).execute();
}

/** Revokes a runner's token unless it is revoked already. */
export async function revokeRunner(db: Kysely<DB>, id: string, at: string): Promise<void> {
  await db.updateTable("runners").set({ revoked_at: at, updated_at: at }).where("id", "=", id).where("revoked_at", "is", null).execute();
}

/** One runner as stored, revoked or not. */
export async function findRunner(db: Kysely<DB>, id: string): Promise<Selectable<RunnerTable> | undefined> {
  return db.selectFrom("runners").selectAll().where("id", "=", id).executeTakeFirst();
}

/** The runners whose token starts with this prefix, revoked ones included. */
export async function runnersWithPrefix(db: Kysely<DB>, prefix: string): Promise<Selectable<RunnerTable>[]> {
  return db.selectFrom("runners").selectAll().where("prefix", "=", prefix).execute();
}

/** The runners a workspace sees (its own and the server-wide ones), for `fetchPage`. */
export function visibleRunnersQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom("runners")
    .selectAll()
    .where((eb) => eb.or([eb("workspace_id", "=", workspaceId), eb("workspace_id", "is", null)]));
}

/** The runners a workspace sees that were heard from since `since` (ISO time), revoked ones left out. */
export async function runnersHeardSince(db: Kysely<DB>, workspaceId: string, since: string) {
  return visibleRunnersQuery(db, workspaceId).where("revoked_at", "is", null).where("last_seen_at", ">=", since).execute();
}

/** How many runners of any workspace were heard from since `since` (ISO time), revoked ones left out. */
export async function countRunnersHeardSince(db: Kysely<DB>, since: string): Promise<number> {
  const row = await db
    .selectFrom("runners")
    .select(({ fn }) => fn.countAll<number>().as("n"))
    .where("revoked_at", "is", null)
    .where("last_seen_at", ">=", since)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The runners the workspace sees whose id or exact name is `ref` (names may repeat), at most `limit`. */
export async function visibleRunnerIdsNamed(db: Kysely<DB>, workspaceId: string, ref: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom("runners")
    .select("id")
    .where((eb) => eb.and([eb.or([eb("workspace_id", "=", workspaceId), eb("workspace_id", "is", null)]), eb.or([eb("id", "=", ref), eb("name", "=", ref)])]))
    .orderBy("id")
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** A runner the workspace sees: its own, or a server-wide one. */
export async function findVisibleRunner(db: Kysely<DB>, workspaceId: string, id: string): Promise<Selectable<RunnerTable> | undefined> {
  return visibleRunnersQuery(db, workspaceId).where("id", "=", id).executeTakeFirst();
}

/** How many of the workspace's runs each of these runners holds `running` now (runners holding none are absent). */
export async function runningCountsInWorkspace(db: Kysely<DB>, workspaceId: string, runnerIds: string[]): Promise<{ runner_id: string | null; n: number }[]> {
  if (runnerIds.length === 0) return [];
  return db
    .selectFrom("runs")
    .innerJoin("projects", "projects.id", "runs.project_id")
    .select(["runs.runner_id", (eb) => eb.fn.countAll<number>().as("n")])
    .where("runs.runner_id", "in", runnerIds)
    .where("runs.status", "=", "running")
    .where("projects.workspace_id", "=", workspaceId)
    .groupBy("runs.runner_id")
    .execute();
}

// ---- runs held by runners ----

/** Marks a claimed run begun, while the runner still holds it under this claim and has not begun it; whether it did. */
export async function beginRunnerRun(db: Kysely<DB>, runnerId: string, run: RunRef, at: string, leaseExpiresAt: string): Promise<boolean> {
  const done = await db
    .updateTable("runs")
    .set({ runner_started_at: at, started_at: at, lease_expires_at: leaseExpiresAt, updated_at: at })
    .where("id", "=", run.id)
    .where("claim", "=", run.claim)
    .where("runner_id", "=", runnerId)
    .where("status", "=", "running")
    .where("runner_started_at", "is", null)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

/** Extends the lease of a run the runner still holds `running` under this claim. */
export async function extendRunnerLease(db: Kysely<DB>, runnerId: string, run: RunRef, leaseExpiresAt: string): Promise<void> {
  await db
    .updateTable("runs")
    .set({ lease_expires_at: leaseExpiresAt })
    .where("id", "=", run.id)
    .where("claim", "=", run.claim)
    .where("runner_id", "=", runnerId)
    .where("status", "=", "running")
    .execute();
}

/** Of these runs, those the runner holds, with what finishing them needs. */
export async function runsHeldBy(db: Kysely<DB>, runnerId: string, runIds: string[]) {
  if (runIds.length === 0) return [];
  return db
    .selectFrom("runs")
    .select(["id", "claim", "automation_id", "started_at", "status"])
    .where("id", "in", runIds)
    .where("runner_id", "=", runnerId)
    .execute();
}

/** Puts a claimed run the runner has not begun back in the queue; whether it did. */
export async function releaseUnbegunRun(db: Kysely<DB>, runnerId: string, run: RunRef, at: string): Promise<boolean> {
  const done = await db
    .updateTable("runs")
    .set({ status: "queued", started_at: null, runner_id: null, lease_expires_at: null, updated_at: at })
    .where("id", "=", run.id)
    .where("claim", "=", run.claim)
    .where("runner_id", "=", runnerId)
    .where("status", "=", "running")
    .where("runner_started_at", "is", null)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) > 0;
}

/** Whether the runner holds the run under this claim in one of these statuses. */
export async function runnerHoldsRun(db: Kysely<DB>, runnerId: string, run: RunRef, statuses: RunStatus[]): Promise<boolean> {
  const row = await db
    .selectFrom("runs")
    .select("id")
    .where("id", "=", run.id)
    .where("runner_id", "=", runnerId)
    .where("claim", "=", run.claim)
    .where("status", "in", statuses)
    .executeTakeFirst();
  return row !== undefined;
}

/** What ending a runner's hold on a run reads of it (its attempts and retries, when and by whom it was begun). */
const LEASED_RUN_COLUMNS = [
  "runs.id",
  "runs.automation_id",
  "runs.started_at",
  "runs.runner_started_at",
  "runs.runner_losses",
  "runs.attempts",
  "runs.spec",
  "runs.lease_expires_at",
  "runs.runner_id",
  "runners.name as runner_name",
] as const;

/** Runs held `running` by a runner whose lease ended before `now`, with the name of the runner. */
export async function runsWithExpiredLeases(db: Kysely<DB>, now: string) {
  return db
    .selectFrom("runs")
    .leftJoin("runners", "runners.id", "runs.runner_id")
    .select(LEASED_RUN_COLUMNS)
    .where("runs.status", "=", "running")
    .where("runs.runner_id", "is not", null)
    .where("runs.lease_expires_at", "<", now)
    .execute();
}

/** A begun run the runner holds under this claim, as runsWithExpiredLeases reads one (its runner stops: see releaseForRunner). */
export async function begunRunHeldBy(db: Kysely<DB>, runnerId: string, run: RunRef) {
  return db
    .selectFrom("runs")
    .leftJoin("runners", "runners.id", "runs.runner_id")
    .select(LEASED_RUN_COLUMNS)
    .where("runs.id", "=", run.id)
    .where("runs.claim", "=", run.claim)
    .where("runs.runner_id", "=", runnerId)
    .where("runs.status", "=", "running")
    .where("runs.runner_started_at", "is not", null)
    .executeTakeFirst();
}

/** Changes a run whose lease expired, unless it ended or was leased again meanwhile (fenced by that lease's end). */
export async function updateExpiredRun(
  db: Kysely<DB>,
  id: string,
  leaseExpiresAt: string | null,
  patch: Pick<
    Updateable<RunTable>,
    | "status"
    | "started_at"
    | "runner_id"
    | "lease_expires_at"
    | "runner_started_at"
    | "runner_losses"
    | "results"
    | "attempts"
    | "updated_at"
    | "error"
    | "finished_at"
    | "duration_ms"
  >,
): Promise<void> {
  await db.updateTable("runs").set(patch).where("id", "=", id).where("status", "=", "running").where("lease_expires_at", "=", leaseExpiresAt).execute();
}
