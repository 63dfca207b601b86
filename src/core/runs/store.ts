// The runs and group_runs tables: every query operations on runs need, typed by the schema.
import { type CompiledQuery, createQueryId, type Insertable, type Kysely, type Selectable, sql, type Updateable } from "kysely";
import type { DB, GroupRunTable, RunTable } from "../../db/schema";
import { oneOf } from "../shared/id-lists-store";
import { sqlDialect } from "../storage";

type RunRow = Selectable<RunTable>;
type RunStatus = RunRow["status"];

/** What a listing shows of a run: everything but its snapshot and step results. */
export const RUN_LIST_COLUMNS = [
  "id",
  "project_id",
  "automation_id",
  "automation_name",
  "group_run_id",
  "environment_id",
  "trigger",
  "schedule_id",
  "started_by",
  "status",
  "attempts",
  "started_at",
  "finished_at",
  "duration_ms",
  "summary",
  "error",
  "quarantined",
  "variables",
  "metadata",
  "one_run_secrets",
  "runner_id",
  "created_at",
  "updated_at",
] as const;
/** The name of the runner that holds or held the run, looked up by its primary key (null: none, or deleted). */
const RUNNER_NAME = sql<string | null>`(SELECT runners.name FROM runners WHERE runners.id = runs.runner_id)`.as("runner_name");
/** The automation's retries as the run's snapshot holds them, read in SQL so lists need not load the snapshot. */
const RETRIES = sql<number | null>`json_extract(runs.spec, '$.retries')`.as("retries");
const RETRIES_PG = sql<number | null>`(runs.spec::jsonb ->> 'retries')::int`.as("retries");
const retries = (db: Kysely<DB>) => (sqlDialect(db) === "postgres" ? RETRIES_PG : RETRIES);

const ACTIVE: RunStatus[] = ["queued", "running"];

/** Statements stay under SQLite's limit on bound parameters however many runs a group queues. */
const INSERT_CHUNK = 200;

/** The insert statement for `count` rows with these columns, per dialect: built once, not per group run. */
const insertStatements = new Map<string, CompiledQuery>();

/**
 * Inserts runs, INSERT_CHUNK rows per statement. The statement is built by the query builder once per dialect and
 * size and then only given values: building it anew made a frozen node per value (a 1,000-run group run has
 * 25,000). It still goes through the plugins (the change feed counts the write). Every row has runRow's columns.
 */
export async function insertRuns(db: Kysely<DB>, rows: Insertable<RunTable>[]): Promise<void> {
  const first = rows[0];
  if (first === undefined) return;
  const columns = Object.keys(first) as (keyof Insertable<RunTable>)[];
  const executor = db.getExecutor();
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    const key = `${sqlDialect(db)} ${chunk.length} ${columns.join(",")}`;
    let template = insertStatements.get(key);
    if (template === undefined) {
      template = db.insertInto("runs").values(chunk).compile();
      insertStatements.set(key, template);
    }
    const parameters: unknown[] = [];
    for (const row of chunk) {
      if (Object.keys(row).length !== columns.length) throw new Error("insertRuns: every run row must have the same columns");
      for (const c of columns) parameters.push(row[c]);
    }
    const queryId = createQueryId();
    const query = executor.transformQuery(template.query, queryId);
    await executor.executeQuery({ sql: template.sql, parameters, query, queryId });
  }
}

/** Points each automation of a group run at its queued run, in one statement for the whole group. */
export async function markGroupRunAutomationsQueued(db: Kysely<DB>, groupRunId: string, at: string): Promise<void> {
  await sql`UPDATE automations SET last_run_id = r.id, last_run_status = 'queued', last_run_at = ${at}
      FROM runs AS r WHERE r.group_run_id = ${groupRunId} AND r.automation_id = automations.id`.execute(db);
}

export async function markAutomationQueued(db: Kysely<DB>, automationId: string, runId: string, at: string): Promise<void> {
  await db.updateTable("automations").set({ last_run_id: runId, last_run_status: "queued", last_run_at: at }).where("id", "=", automationId).execute();
}

/** The environments a group run's runs use (each run names its own, the group run's or its automation's). */
export async function environmentsOfGroupRun(db: Kysely<DB>, groupRunId: string): Promise<(string | null)[]> {
  const rows = await db.selectFrom("runs").select("environment_id").distinct().where("group_run_id", "=", groupRunId).execute();
  return rows.map((r) => r.environment_id);
}

/** The queued and running runs of one run, one automation, several automations or one group run. */
export async function activeRuns(db: Kysely<DB>, filter: { runId?: string; automationId?: string; automationIds?: string[]; groupRunId?: string }) {
  let q = db.selectFrom("runs").select(["id", "started_at", "group_run_id"]).where("status", "in", ACTIVE);
  if (filter.automationId) q = q.where("automation_id", "=", filter.automationId);
  if (filter.automationIds) q = q.where("automation_id", "in", filter.automationIds);
  if (filter.runId) q = q.where("id", "=", filter.runId);
  if (filter.groupRunId) q = q.where("group_run_id", "=", filter.groupRunId);
  return q.execute();
}

/** Puts runs this server's engine claimed but never started back in the queue (still under that claim). */
export async function releaseUnstartedRuns(db: Kysely<DB>, runs: { id: string; claim: number }[], at: string): Promise<void> {
  for (const r of runs) {
    await db
      .updateTable("runs")
      .set({ status: "queued", started_at: null, updated_at: at })
      .where("id", "=", r.id)
      .where("claim", "=", r.claim)
      .where("status", "=", "running")
      .where("runner_id", "is", null)
      .execute();
  }
}

/** Cancels a run unless it finished meanwhile. */
export async function cancelActiveRun(
  db: Kysely<DB>,
  id: string,
  patch: Pick<Updateable<RunTable>, "error" | "finished_at" | "updated_at" | "duration_ms">,
): Promise<void> {
  await db
    .updateTable("runs")
    .set({ ...patch, status: "cancelled" })
    .where("id", "=", id)
    .where("status", "in", ACTIVE)
    .execute();
}

/** The automation whose last run this is shows it cancelled. */
export async function markLastRunCancelled(db: Kysely<DB>, runId: string): Promise<void> {
  await db.updateTable("automations").set({ last_run_status: "cancelled" }).where("last_run_id", "=", runId).execute();
}

/** A project's runs for fetchPage, without snapshots or step results; `metadata` must all match exactly. */
export function runsQuery(
  db: Kysely<DB>,
  projectId: string,
  filter: { status?: RunStatus; automationId?: string; groupRunId?: string; runnerId?: string; metadata?: Record<string, string> },
) {
  let q = db
    .selectFrom("runs")
    .select([...RUN_LIST_COLUMNS, retries(db), RUNNER_NAME])
    .where("project_id", "=", projectId);
  if (filter.status) q = q.where("status", "=", filter.status);
  if (filter.automationId) q = q.where("automation_id", "=", filter.automationId);
  if (filter.groupRunId) q = q.where("group_run_id", "=", filter.groupRunId);
  if (filter.runnerId) q = q.where("runner_id", "=", filter.runnerId);
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    q = q.where("id", "in", db.selectFrom("run_metadata").select("subject_id").where("key", "=", key).where("value", "=", value));
  }
  return q;
}

/** The latest `limit` runs of these projects, newest first, as listings show them. */
export async function latestRunsOf(db: Kysely<DB>, projectIds: string[], limit: number) {
  if (projectIds.length === 0) return [];
  return db
    .selectFrom("runs")
    .select([...RUN_LIST_COLUMNS, retries(db), RUNNER_NAME])
    .where(oneOf(db, "project_id", projectIds))
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}

/** How many runs of these projects are queued and how many running, by project (one grouped read of runs_queue). */
export async function activeRunCounts(db: Kysely<DB>, projectIds: string[]): Promise<{ project_id: string; status: RunStatus; n: number }[]> {
  if (projectIds.length === 0) return [];
  const rows = await db
    .selectFrom("runs")
    .select(["project_id", "status", (eb) => eb.fn.countAll().as("n")])
    .where("status", "in", ACTIVE)
    .where(oneOf(db, "project_id", projectIds))
    .groupBy(["project_id", "status"])
    .execute();
  // PostgreSQL counts in bigint, which its driver hands over as text.
  return rows.map((r) => ({ project_id: r.project_id, status: r.status, n: Number(r.n) }));
}

/** Metadata as rows of a run or group run, for exact filtering. */
export async function insertMetadata(db: Kysely<DB>, subjectIds: string[], metadata: Record<string, string>): Promise<void> {
  const rows = subjectIds.flatMap((subject_id) => Object.entries(metadata).map(([key, value]) => ({ subject_id, key, value })));
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db
      .insertInto("run_metadata")
      .values(rows.slice(i, i + INSERT_CHUNK))
      .execute();
  }
}

/** What the run engine needs beside a claimed run: its per-run variables and the names of its one-run secrets. */
export async function runOverrides(db: Kysely<DB>, ids: string[]) {
  if (ids.length === 0) return [];
  return db.selectFrom("runs").select(["id", "group_run_id", "variables", "one_run_secrets"]).where("id", "in", ids).execute();
}

/** The group runs (with runs yet to queue) of these runs, and how each run ended. */
export async function sequentialGroupRunsOf(db: Kysely<DB>, runIds: string[]) {
  if (runIds.length === 0) return [];
  return db
    .selectFrom("runs")
    .innerJoin("group_runs", "group_runs.id", "runs.group_run_id")
    .select(["runs.id as run_id", "runs.status as run_status", "group_runs.id as group_run_id"])
    .where("runs.id", "in", runIds)
    .where("group_runs.pending", "!=", "[]")
    .execute();
}

/** Takes the group run's next pending automations, only if nobody took them meanwhile. */
export async function setPending(db: Kysely<DB>, groupRunId: string, from: string, to: string, at: string): Promise<boolean> {
  const res = await db
    .updateTable("group_runs")
    .set({ pending: to, updated_at: at })
    .where("id", "=", groupRunId)
    .where("pending", "=", from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function readGroupRun(db: Kysely<DB>, id: string): Promise<Selectable<GroupRunTable> | undefined> {
  return db.selectFrom("group_runs").selectAll().where("id", "=", id).executeTakeFirst();
}

/** How many runs the group run has so far (the position of the next). */
export async function runCountOfGroupRun(db: Kysely<DB>, groupRunId: string): Promise<number> {
  const r = await db
    .selectFrom("runs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("group_run_id", "=", groupRunId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export async function findRun(db: Kysely<DB>, projectId: string, id: string): Promise<(RunRow & { runner_name: string | null }) | undefined> {
  return db.selectFrom("runs").selectAll().select(RUNNER_NAME).where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

/** Who holds each of these runs that still exists (a runner, or null for a server's engine), under which claim, and their status. */
export async function runHolders(db: Kysely<DB>, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom("runs")
    .select(["id", "status", "claim", "runner_id"])
    .where(oneOf(db, "id", ids))
    .execute();
}

/** A run's status now, or undefined once it is gone (for waits that re-check cheaply). */
export async function runStatus(db: Kysely<DB>, id: string): Promise<RunRow["status"] | undefined> {
  return (await db.selectFrom("runs").select("status").where("id", "=", id).executeTakeFirst())?.status;
}

/** Whether any run of the group run is still queued or running. */
export async function groupRunHasOpenRuns(db: Kysely<DB>, groupRunId: string, projectId: string): Promise<boolean> {
  // One status at a time, by project: the queue index (runs_queue) holds the few running runs and the project's
  // queued ones oldest first, so the probe stops at once; the group-run index would walk every ended run of the
  // group before its open ones, once per finished batch of a large group run.
  for (const status of ["running", "queued"] as const) {
    const open = await db
      .selectFrom("runs")
      .select("id")
      .where("status", "=", status)
      .where("project_id", "=", projectId)
      .where("group_run_id", "=", groupRunId)
      .limit(1)
      .executeTakeFirst();
    if (open !== undefined) return true;
  }
  return false;
}

/** A run known to exist. */
export async function readRun(db: Kysely<DB>, id: string): Promise<RunRow> {
  return db.selectFrom("runs").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

/** Saves the steps reached so far, while the run is still `running` under this claim. */
export async function saveRunProgress(
  db: Kysely<DB>,
  run: { id: string; claim: number },
  progress: { resultsJson: string; summaryJson: string; attemptsJson: string; at: string },
): Promise<void> {
  await sql`UPDATE runs SET results = ${progress.resultsJson}, summary = ${progress.summaryJson},
      attempts = ${progress.attemptsJson}, updated_at = ${progress.at}
    WHERE id = ${run.id} AND status = 'running' AND claim = ${run.claim}`.execute(db);
}

/**
 * Runs `running` in a server's own engine (not held by a remote runner). With `lost`, only those whose node let its
 * lease lapse: expired, or never set (a node dies between its claim and its first renewal) and begun before
 * `startedBefore`.
 */
export async function locallyRunningRuns(db: Kysely<DB>, lost?: { now: string; startedBefore: string }) {
  let q = db.selectFrom("runs").select(["id", "automation_id", "started_at"]).where("status", "=", "running").where("runner_id", "is", null);
  if (lost) {
    q = q.where((eb) =>
      eb.or([
        eb.and([eb("lease_expires_at", "is not", null), eb("lease_expires_at", "<", lost.now)]),
        eb.and([eb("lease_expires_at", "is", null), eb("started_at", "<", lost.startedBefore)]),
      ]),
    );
  }
  return q.execute();
}

/** A node's lease on the runs its engine executes, renewed while it runs them (several nodes on PostgreSQL). */
export async function renewLocalLeases(db: Kysely<DB>, ids: string[], until: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    await db
      .updateTable("runs")
      .set({ lease_expires_at: until })
      .where("id", "in", ids.slice(i, i + 500))
      .where("status", "=", "running")
      .where("runner_id", "is", null)
      .execute();
  }
}

/** Ends a run left `running` with an error, unless it ended meanwhile. */
export async function endRunningRunWithError(
  db: Kysely<DB>,
  id: string,
  patch: Pick<Updateable<RunTable>, "error" | "finished_at" | "updated_at" | "duration_ms">,
): Promise<void> {
  // The claim moves on: the process that held the run can no longer finish it.
  await db
    .updateTable("runs")
    .set({ ...patch, status: "error", claim: sql`claim + 1` })
    .where("id", "=", id)
    .where("status", "=", "running")
    .execute();
}

/** The automation whose last run this still is shows it errored. */
export async function markLastRunErrored(db: Kysely<DB>, automationId: string, runId: string, at: string): Promise<void> {
  await db
    .updateTable("automations")
    .set({ last_run_status: "error", last_run_at: at })
    .where("id", "=", automationId)
    .where("last_run_id", "=", runId)
    .execute();
}

// ---- group runs ----

export async function insertGroupRun(db: Kysely<DB>, row: Insertable<GroupRunTable>): Promise<void> {
  await db.insertInto("group_runs").values(row).execute();
}

export async function findGroupRun(db: Kysely<DB>, projectId: string, id: string): Promise<Selectable<GroupRunTable> | undefined> {
  return db.selectFrom("group_runs").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

/** A group run's runs in their group's order, with snapshots and step results. */
export async function runsOfGroupRun(db: Kysely<DB>, groupRunId: string): Promise<(RunRow & { runner_name: string | null })[]> {
  return db.selectFrom("runs").selectAll().select(RUNNER_NAME).where("group_run_id", "=", groupRunId).orderBy("position").execute();
}

/** The ids of a group run's runs. */
export async function runIdsOfGroupRun(db: Kysely<DB>, groupRunId: string): Promise<string[]> {
  const rows = await db.selectFrom("runs").select("id").where("group_run_id", "=", groupRunId).execute();
  return rows.map((r) => r.id);
}

/** These runs' snapshots as stored (core/runs/waiting.ts reads their kind). */
export async function specsOfRuns(db: Kysely<DB>, ids: string[]): Promise<{ id: string; spec: string }[]> {
  if (ids.length === 0) return [];
  return db.selectFrom("runs").select(["id", "spec"]).where("id", "in", ids).execute();
}

/** A group run's runs in their group's order, as a listing shows them. */
export async function listedRunsOfGroupRun(db: Kysely<DB>, groupRunId: string) {
  return db
    .selectFrom("runs")
    .select([...RUN_LIST_COLUMNS, retries(db), RUNNER_NAME])
    .where("group_run_id", "=", groupRunId)
    .orderBy("position")
    .execute();
}

/** A project's group runs for fetchPage, of one group when given; `metadata` must all match exactly. */
export function groupRunsQuery(db: Kysely<DB>, projectId: string, groupId?: string, metadata: Record<string, string> = {}) {
  let q = db.selectFrom("group_runs").selectAll().where("project_id", "=", projectId);
  if (groupId !== undefined) q = q.where("group_id", "=", groupId);
  for (const [key, value] of Object.entries(metadata)) {
    q = q.where("id", "in", db.selectFrom("run_metadata").select("subject_id").where("key", "=", key).where("value", "=", value));
  }
  return q;
}

/** The group runs among `ids` whose verdict is not stored yet. */
export async function unsettledGroupRuns(db: Kysely<DB>, ids: string[]): Promise<Selectable<GroupRunTable>[]> {
  if (ids.length === 0) return [];
  return db.selectFrom("group_runs").selectAll().where("id", "in", ids).where("status", "is", null).execute();
}

/** The group runs of these runs. */
export async function groupRunIdsOfRuns(db: Kysely<DB>, runIds: string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const rows = await db
    .selectFrom("runs")
    .select("group_run_id")
    .distinct()
    .where(oneOf(db, "id", runIds))
    .where("group_run_id", "is not", null)
    .execute();
  return rows.map((r) => r.group_run_id).filter((x): x is string => x !== null);
}

/** Stores a group run's verdict once, when its last run has ended. */
export async function storeGroupRunVerdict(
  db: Kysely<DB>,
  id: string,
  verdict: Pick<Updateable<GroupRunTable>, "status" | "summary" | "started_at" | "finished_at" | "updated_at">,
): Promise<void> {
  await db.updateTable("group_runs").set(verdict).where("id", "=", id).where("status", "is", null).execute();
}

/**
 * Takes hold of a group run that has not ended, for the rest of the caller's transaction (a write that changes
 * nothing, for its lock): whoever would queue its next run, end it or cancel it too waits until that commits.
 * False when it has ended.
 */
export async function holdUnendedGroupRun(db: Kysely<DB>, id: string): Promise<boolean> {
  const res = await db
    .updateTable("group_runs")
    .set((eb) => ({ pending: eb.ref("pending") }))
    .where("id", "=", id)
    .where("status", "is", null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Stores the verdict of a group run cancelled in the caller's transaction, over the one its runs gave it there. */
export async function storeCancelledGroupRunVerdict(
  db: Kysely<DB>,
  id: string,
  verdict: Pick<Updateable<GroupRunTable>, "summary" | "started_at" | "finished_at" | "updated_at">,
): Promise<void> {
  await db
    .updateTable("group_runs")
    .set({ ...verdict, status: "cancelled" })
    .where("id", "=", id)
    .execute();
}

/** What a listing derives group runs from: their runs' status, times and attempts. */
export async function runStatusesOfGroupRuns(db: Kysely<DB>, groupRunIds: string[]) {
  if (groupRunIds.length === 0) return [];
  return db
    .selectFrom("runs")
    .select(["id", "group_run_id", "status", "started_at", "finished_at", "attempts", "quarantined"])
    .where("group_run_id", "in", groupRunIds)
    .execute();
}

/** The names a run's starter is shown by: the key's, the person's email, the schedule's (each when given and found). */
export async function starterNames(db: Kysely<DB>, ids: { keyId: string | null; userId: string; scheduleId: string | null }) {
  const key = ids.keyId ? await db.selectFrom("api_keys").select("name").where("id", "=", ids.keyId).executeTakeFirst() : undefined;
  const user = await db.selectFrom("users").select("email").where("id", "=", ids.userId).executeTakeFirst();
  const schedule = ids.scheduleId ? await db.selectFrom("schedules").select("name").where("id", "=", ids.scheduleId).executeTakeFirst() : undefined;
  return { key: key?.name ?? null, email: user?.email ?? null, schedule: schedule?.name ?? null };
}
