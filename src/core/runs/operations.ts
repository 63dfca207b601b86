// Runs and group runs: queueing, reading, cancelling, JUnit export and artifacts.
import type { Kysely, Selectable, Transaction } from "kysely";
import type { DB, GroupRunTable, RunTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { conflict, invalid, notFound } from "../../manifest/errors";
import { StartedBy, setApart, TERMINAL_RUN_STATUSES } from "../../manifest/records";
import type { Core, OpContext } from "../context";
import type { Handler } from "../handler";
import { AttemptsColumn, GroupSummaryColumn, ResultsColumn, type RunSpec, RunSpecColumn, StringList, StringMap, SummaryColumn } from "../shared/columns";
import { readJsonColumn, readJsonColumnOr, readSharedJsonColumn, readSharedJsonColumnOr } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { passedAfterRetry } from "../history/operations";
import { LISTED_TWINS, type ListFilter, listFilter, refuseUnknownFilters, resolveProject, twinsRefusal, unknownFilter, unresolvedFilter } from "../scope";
import { assertMayCancelIn, assertMayRunIn } from "../environments/protection";
import * as environments from "../environments/store";
import * as runners from "../runners/store";
import { readRunArtifact } from "./artifacts";
import { forgetOneRunSecrets, keepOneRunSecrets } from "./one-run-secrets";
import { type RunnableAutomation, type RunOptions, runRow } from "./run-rows";
import { stopSequentialGroupRuns } from "./sequence";
import { groupRunJunit, NOT_QUEUED_YET, runJunit } from "./junit";
import * as automationStore from "../automations/store";
import * as store from "./store";
import { type WaitingRun, waitingReasons } from "./waiting";

type O = typeof ops;
export type { RunOptions };
export type RunRow = Selectable<RunTable>;
type GroupRunRow = Selectable<GroupRunTable>;
type RunStatus = RunRow["status"];
export type { RunSpec };

type ListedRun = Pick<RunRow, (typeof store.RUN_LIST_COLUMNS)[number]> &
  Partial<Pick<RunRow, "results" | "spec">> & { retries?: number | null; runner_name?: string | null };

/** Passed, but only after a failed attempt: a result to trust less than a first-time pass. */
export function isFlaky(status: string, attempts: { status: string }[]): boolean {
  return status === "passed" && attempts.some((a) => a.status !== "passed");
}

function maxAttempts(row: ListedRun): number {
  // A damaged snapshot still leaves the run readable: the run engine ends such a run as error and says why.
  const retries = row.retries !== undefined ? row.retries : row.spec === undefined ? null : readJsonColumnOr(RunSpecColumn, row.spec, null)?.retries;
  return Math.max(1, (typeof retries === "number" ? retries : 0) + 1);
}

/** Who or what started a run or group run, as kept with it (null for those started before it was kept). */
const startedBy = (text: string | null) => (text === null ? null : readSharedJsonColumnOr(StartedBy, text, null));

/** What a run started by this request keeps as its starter: the schedule, the assistant, the key, the operator or the person. */
export async function startedByOf(ctx: OpContext, db: Kysely<DB>, scheduleId: string | null | undefined): Promise<string> {
  const p = ctx.principal;
  const names = await store.starterNames(db, { keyId: p.keyId, userId: p.userId, scheduleId: scheduleId ?? null });
  const who =
    p.trigger === "schedule"
      ? { kind: "schedule", name: names.schedule ?? scheduleId ?? "a schedule" }
      : p.trigger === "assistant"
        ? { kind: "assistant", name: names.email ?? p.userId }
        : p.keyId
          ? { kind: "key", name: names.key ?? p.keyId }
          : p.via === "operator"
            ? { kind: "operator", name: names.email ?? "svc admin" }
            : { kind: "user", name: names.email ?? p.userId };
  return JSON.stringify(who);
}

export function toRun(row: ListedRun, withSteps: boolean) {
  const results = withSteps && row.results !== undefined ? readJsonColumn(ResultsColumn, row.results, `results of run ${row.id}`) : {};
  // Runs recorded before attempts carried a message still say what went wrong when they errored.
  const attempts = readSharedJsonColumn(AttemptsColumn, row.attempts, `attempts of run ${row.id}`).map((a) => ({
    attempt: a.attempt,
    status: a.status,
    error: a.error,
    message: a.message ?? a.error,
    duration_ms: a.duration_ms,
  }));
  return {
    id: row.id,
    project_id: row.project_id,
    automation_id: row.automation_id,
    automation_name: row.automation_name,
    group_run_id: row.group_run_id,
    environment_id: row.environment_id,
    trigger: row.trigger,
    schedule_id: row.schedule_id,
    started_by: startedBy(row.started_by),
    status: row.status,
    started_at: row.started_at,
    finished_at: row.finished_at,
    duration_ms: row.duration_ms,
    summary: readSharedJsonColumn(SummaryColumn, row.summary, `summary of run ${row.id}`),
    error: row.error,
    attempts,
    max_attempts: maxAttempts(row),
    flaky: isFlaky(row.status, attempts),
    quarantined: row.quarantined === 1,
    variables: readSharedJsonColumn(StringMap, row.variables, `variables of run ${row.id}`),
    one_run_secrets: readSharedJsonColumn(StringList, row.one_run_secrets, `one_run_secrets of run ${row.id}`),
    metadata: readSharedJsonColumn(StringMap, row.metadata, `metadata of run ${row.id}`),
    runner: row.runner_id === null ? null : { id: row.runner_id, name: row.runner_name ?? null },
    ...(withSteps ? { steps: results.steps ?? [], artifacts: results.artifacts ?? [] } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export const NO_RUN_OPTIONS: RunOptions = { environmentId: null, variables: {}, secrets: {}, metadata: {} };

/** A run request's options, its environment resolved by the caller. */
export function runOptions(
  environmentId: string | null,
  body: { variables?: Record<string, string>; secrets?: Record<string, string>; metadata?: Record<string, string> },
): RunOptions {
  const variables = body.variables ?? {};
  const secrets = body.secrets ?? {};
  const both = Object.keys(secrets).filter((k) => Object.hasOwn(variables, k));
  if (both.length > 0) {
    throw invalid(
      `${both.join(", ")} is given both as a variable and as a secret`,
      both.map((k) => ({ path: `body.variables.${k}`, message: "also given as a secret" })),
    );
  }
  return { environmentId, variables, secrets, metadata: body.metadata ?? {} };
}

/** A per-run variable may not shadow a secret of the environment it runs in (its value would leave the masking). */
async function assertNoShadowedSecrets(trx: Transaction<DB>, environmentIds: (string | null)[], variables: Record<string, string>): Promise<void> {
  const names = Object.keys(variables);
  if (names.length === 0) return;
  const ids = [...new Set(environmentIds.filter((id): id is string => id !== null))];
  for (const env of await environments.environmentsAmong(trx, ids)) {
    const secretNames = Object.keys(readJsonColumnOr(StringMap, env.secrets, {}));
    const shadowed = names.filter((n) => secretNames.includes(n));
    if (shadowed.length > 0) {
      throw invalid(
        `a per-run variable cannot shadow a secret of the environment "${env.name}": ${shadowed.join(", ")}`,
        shadowed.map((n) => ({ path: `body.variables.${n}`, message: `a secret of environment "${env.name}"` })),
      );
    }
  }
}

/** Queues one run per automation (inside the caller's transaction). */
export async function enqueueRuns(
  ctx: OpContext,
  trx: Transaction<DB>,
  input: {
    projectId: string;
    groupRunId: string | null;
    automations: RunnableAutomation[];
    /** Position of the first run in its group run (a sequential group run queues them one by one). */
    firstPosition?: number;
  } & RunOptions,
): Promise<RunRow[]> {
  const envIds = input.automations.map((a) => input.environmentId ?? a.environment_id);
  await assertMayRunIn(ctx, trx, envIds);
  await assertNoShadowedSecrets(trx, envIds, input.variables);
  const t = nowIso();
  const first = input.firstPosition ?? 0;
  const options = input.startedBy !== undefined ? input : { ...input, startedBy: await startedByOf(ctx, trx, input.scheduleId) };
  const rows = input.automations.map((a, i) =>
    runRow(a, { projectId: input.projectId, groupRunId: input.groupRunId, position: first + i, trigger: ctx.principal.trigger, options, now: t }),
  );
  await store.insertRuns(trx, rows);
  await store.insertMetadata(
    trx,
    rows.map((r) => r.id),
    input.metadata,
  );
  // Kept before the transaction commits, so the engine never claims the run without them.
  for (const r of rows) keepOneRunSecrets(ctx.core, r.id, input.secrets);
  if (input.groupRunId !== null && rows.length > 1) {
    // One statement for a whole group instead of one per automation.
    await store.markGroupRunAutomationsQueued(trx, input.groupRunId, t);
    return rows;
  }
  for (const r of rows) await store.markAutomationQueued(trx, r.automation_id, r.id, t);
  return rows;
}

/**
 * Cancels the queued and running runs matching the filter (inside the caller's transaction) and answers their ids.
 * The engines and waiting readers are told at once, unless `tellAfterCommit`: then the caller tells them with
 * tellRunsCancelled once its transaction has committed — on PostgreSQL a listener that reads at once (a remote
 * runner's waiting heartbeat, a long-poll) would otherwise still see the runs going on, and hear nothing more.
 */
export async function cancelRunsWhere(
  ctx: OpContext,
  trx: Transaction<DB>,
  filter: { automationId?: string; runId?: string; groupRunId?: string },
  reason: string,
  opts: { tellAfterCommit?: boolean } = {},
): Promise<string[]> {
  const active = await store.activeRuns(trx, filter);
  const t = nowIso();
  for (const r of active) {
    await store.cancelActiveRun(trx, r.id, {
      error: reason,
      finished_at: t,
      updated_at: t,
      duration_ms: r.started_at ? Date.parse(t) - Date.parse(r.started_at) : null,
    });
    await store.markLastRunCancelled(trx, r.id);
    forgetOneRunSecrets(ctx.core, r.id);
    if (!opts.tellAfterCommit) ctx.core.events.emit("runCancelled", r.id);
  }
  // A cancelled run of a sequential group run ends it: the runs it had yet to queue are not run.
  await stopSequentialGroupRuns(
    ctx.core,
    trx,
    active.map((r) => r.group_run_id).filter((id): id is string => id !== null),
    "not run: an earlier run of the sequential group run was cancelled",
  );
  await settleGroupRuns(trx, [...new Set(active.flatMap((r) => (r.group_run_id === null ? [] : [r.group_run_id])))]);
  return active.map((r) => r.id);
}

/** Tells the engines (a local worker, a remote runner's heartbeat) and waiting readers that these runs were cancelled. */
export function tellRunsCancelled(core: Core, runIds: string[]): void {
  for (const id of runIds) core.events.emit("runCancelled", id);
}

export async function listRunsPage(
  ctx: OpContext,
  projectId: string,
  query: { limit: number; cursor?: string; status?: RunStatus; automation?: string; group_run?: string; runner?: string; metadata?: Record<string, string> },
) {
  const q = store.runsQuery(ctx.core.db, projectId, {
    status: query.status,
    automationId: query.automation,
    groupRunId: query.group_run,
    runnerId: query.runner,
    metadata: query.metadata,
  });
  return fetchPage(q, "runs", query, (r) => toRun(r, false));
}

async function resolveRun(ctx: OpContext, projectRef: string, runId: string) {
  const project = await resolveProject(ctx, projectRef);
  const run = await store.findRun(ctx.core.db, project.id, runId);
  if (!run) throw notFound("run");
  return { project, run };
}

export const listRuns: Handler<O["listRuns"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  const automation = query.automation ? await listFilter(ctx, "automation", project.id, query.automation, "automation", params.project) : undefined;
  const groupRun = query.group_run ? groupRunFilter(ctx, project.id, query.group_run, params.project) : undefined;
  const runner = query.runner ? await runnerFilter(ctx, query.runner) : undefined;
  const page = await listRunsPage(ctx, project.id, { ...query, automation: automation?.id, group_run: groupRun?.id, runner: runner?.id });
  await refuseUnknownFilters(page, [automation, groupRun, runner]);
  return page;
};

/** The runner a filter names (id or exact name, among the runners the workspace sees: its own and the server-wide ones). */
async function runnerFilter(ctx: OpContext, ref: string): Promise<ListFilter> {
  const ids = await runners.visibleRunnerIdsNamed(ctx.core.db, ctx.principal.workspaceId, ref, LISTED_TWINS + 1);
  const where = "among the workspace's runners";
  if (ids.length > 1) throw twinsRefusal("runner", ref, where, ids, "runner");
  const [id] = ids;
  if (id) return { id };
  return unresolvedFilter(ref, () => unknownFilter("runner", ref, where, "runner", "give its exact name, or its id rnr_…"));
}

/** The group run a filter names (by id: group runs have no names), looked up only if no run matched. */
function groupRunFilter(ctx: OpContext, projectId: string, ref: string, projectRef: string): ListFilter {
  return {
    id: ref,
    namesNothing: async () =>
      (await store.findGroupRun(ctx.core.db, projectId, ref))
        ? null
        : unknownFilter("group run", ref, `in project ${projectRef}`, "group_run", "give its id grn_…"),
  };
}

const isFinalRunStatus = (s: string) => (TERMINAL_RUN_STATUSES as readonly string[]).includes(s);

export const getRun: Handler<O["getRun"]> = async (ctx, { params, query }) => {
  const { project, run } = await resolveRun(ctx, params.project, params.runId);
  if (query.wait === 0 || isFinalRunStatus(run.status)) return runDetail(ctx, run);
  await ctx.core.waits.until({
    workspaceId: ctx.principal.workspaceId,
    keys: [run.id],
    seconds: query.wait,
    signal: ctx.signal,
    settled: async () => {
      const now = await store.runStatus(ctx.core.db, run.id);
      return now === undefined || isFinalRunStatus(now);
    },
  });
  const now = await store.findRun(ctx.core.db, project.id, run.id);
  if (!now) throw notFound("run");
  return runDetail(ctx, now);
};

export const cancelRun: Handler<O["cancelRun"]> = async (ctx, { params }) => {
  const { run } = await resolveRun(ctx, params.project, params.runId);
  if (run.status !== "queued" && run.status !== "running") throw conflict(`the run has already finished (${run.status})`);
  await assertMayCancelIn(ctx, ctx.core.db, [run.environment_id]);
  const cancelled = await ctx.core.db
    .transaction()
    .execute((trx) => cancelRunsWhere(ctx, trx, { runId: run.id }, "cancelled by request", { tellAfterCommit: true }));
  if (cancelled.length === 0) throw conflict("the run finished before it could be cancelled");
  tellRunsCancelled(ctx.core, cancelled);
  const next = await store.readRun(ctx.core.db, run.id);
  return runDetail(ctx, next);
};

export const getRunJunit: Handler<O["getRunJunit"]> = async (ctx, { params }) => {
  const { run } = await resolveRun(ctx, params.project, params.runId);
  return { body: runJunit(toRun(run, true)), contentType: "application/xml; charset=utf-8", filename: `${run.id}.xml` };
};

const ARTIFACT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
/** Shown in place: images only. Anything else (a file an older version kept) is a download, never a page of svc's origin. */
const IMAGE_TYPES: Record<string, string> = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg" };

export const getRunArtifact: Handler<O["getRunArtifact"]> = async (ctx, { params }) => {
  const { run } = await resolveRun(ctx, params.project, params.runId);
  if (!ARTIFACT_NAME.test(params.name) || params.name.includes("..")) throw notFound("artifact");
  const bytes = await readRunArtifact(ctx.core, run.id, params.name);
  if (!bytes) throw notFound("artifact");
  const image = IMAGE_TYPES[params.name.split(".").pop()?.toLowerCase() ?? ""];
  const body = new Blob([bytes as Uint8Array<ArrayBuffer>]);
  return image ? { body, contentType: image, filename: params.name } : { body, contentType: "application/octet-stream", filename: params.name, download: true };
};

// ---- group runs ----

type RunLike = ReturnType<typeof toRun>;

export function deriveGroupStatus(statuses: string[]): RunStatus {
  if (statuses.length === 0) return "passed";
  if (statuses.every((s) => s === "queued")) return "queued";
  if (statuses.some((s) => s === "queued" || s === "running")) return "running";
  if (statuses.some((s) => s === "failed" || s === "error" || s === "timed_out")) return "failed";
  if (statuses.some((s) => s === "cancelled")) return "cancelled";
  return "passed";
}

/** What a group run is derived from: its runs' status and times (a listing reads no more). */
type GroupMember = Pick<RunLike, "status" | "started_at" | "finished_at" | "flaky" | "quarantined">;

export function toGroupRun(row: GroupRunRow, runs: RunLike[], withRuns: true): ReturnType<typeof groupRun<RunLike>>;
export function toGroupRun(row: GroupRunRow, runs: GroupMember[], withRuns: false): Omit<ReturnType<typeof groupRun<GroupMember>>, "runs">;
export function toGroupRun(row: GroupRunRow, runs: GroupMember[], withRuns: boolean) {
  return groupRun(row, runs, withRuns);
}

/** The verdict of a group run from its runs (and a sequential one's automations not queued yet): status, times and summary. */
export function groupVerdict(runs: GroupMember[], pending = 0) {
  // A sequential group run's automations not queued yet count as queued.
  const count = (s: string) => runs.filter((r) => r.status === s).length + (s === "queued" ? pending : 0);
  // Quarantined failures count as passes for the verdict (still failing under their own status in the summary).
  const status = deriveGroupStatus([...runs.map((r) => (setApart(r) ? "passed" : r.status)), ...Array<string>(pending).fill("queued")]);
  const starts = runs
    .map((r) => r.started_at)
    .filter((x): x is string => x !== null)
    .sort();
  const ends = runs
    .map((r) => r.finished_at)
    .filter((x): x is string => x !== null)
    .sort();
  const finished = !["queued", "running"].includes(status);
  const startedAt = starts[0] ?? null;
  const finishedAt = finished ? (ends[ends.length - 1] ?? null) : null;
  return {
    status,
    finished,
    started_at: startedAt,
    finished_at: finishedAt,
    summary: {
      total: runs.length + pending,
      queued: count("queued"),
      running: count("running"),
      passed: count("passed"),
      flaky: runs.filter((r) => r.flaky).length,
      failed: count("failed"),
      error: count("error"),
      timed_out: count("timed_out"),
      cancelled: count("cancelled"),
      quarantined: runs.filter(setApart).length,
    },
  };
}

/** How many automations a sequential group run has yet to queue. */
const pendingOf = (row: GroupRunRow) => readJsonColumn(StringList, row.pending, `pending of group run ${row.id}`).length;

function groupRun<R extends GroupMember>(row: GroupRunRow, runs: R[], withRuns: boolean) {
  // Once ended, the verdict stored then is the group run's (retention removes whole group runs, never part of one).
  const stored = row.status !== null && row.summary !== null ? readJsonColumnOr(GroupSummaryColumn, row.summary, null) : null;
  const v = stored
    ? { status: row.status as RunStatus, started_at: row.started_at, finished_at: row.finished_at, summary: stored }
    : groupVerdict(runs, pendingOf(row));
  return {
    id: row.id,
    project_id: row.project_id,
    group_id: row.group_id,
    group_name: row.group_name,
    trigger: row.trigger,
    schedule_id: row.schedule_id,
    started_by: startedBy(row.started_by),
    environment_id: row.environment_id,
    variables: readJsonColumn(StringMap, row.variables, `variables of group run ${row.id}`),
    metadata: readJsonColumn(StringMap, row.metadata, `metadata of group run ${row.id}`),
    mode: row.mode,
    stop_on_failure: row.stop_on_failure === 1,
    status: v.status,
    started_at: v.started_at,
    finished_at: v.finished_at,
    duration_ms: v.started_at && v.finished_at ? Date.parse(v.finished_at) - Date.parse(v.started_at) : null,
    summary: v.summary,
    ...(withRuns ? { runs } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** A group run with its runs; `db` is the caller's transaction when it reads what that transaction wrote. */
export async function loadGroupRun(ctx: OpContext, projectId: string, groupRunId: string, withSteps = false, db: Kysely<DB> = ctx.core.db) {
  const row = await store.findGroupRun(db, projectId, groupRunId);
  if (!row) throw notFound("group run");
  const runs = withSteps ? await store.runsOfGroupRun(db, row.id) : await store.listedRunsOfGroupRun(db, row.id);
  return { row, runs: runs.map((r) => toRun(r, withSteps)) };
}

export const listGroupRuns: Handler<O["listGroupRuns"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  const group = query.group ? await listFilter(ctx, "group", project.id, query.group, "group", params.project) : undefined;
  const page = await fetchPage(store.groupRunsQuery(ctx.core.db, project.id, group?.id, query.metadata), "group_runs", query, (r) => r);
  await refuseUnknownFilters(page, [group]);
  const runs = await groupMembers(
    ctx.core.db,
    page.data.map((r) => r.id),
  );
  return {
    // Without its runs, a group run is derived from these fields alone.
    data: page.data.map((g) =>
      toGroupRun(
        g,
        runs.filter((s) => s.group_run_id === g.id),
        false,
      ),
    ),
    next_cursor: page.next_cursor,
  };
};

export const getGroupRun: Handler<O["getGroupRun"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  const head = await store.findGroupRun(ctx.core.db, project.id, params.groupRunId);
  if (!head) throw notFound("group run");
  // A stored verdict means it has ended; without one it is answered at once, or waited for: read whole once only.
  if (query.wait > 0 && head.status === null) {
    // A group run ends when the last of its runs does (a sequential one's later runs are queued as it goes: the
    // database's change wakes the wait for those, the ends of the runs known at the start wake it for these).
    await ctx.core.waits.until({
      workspaceId: ctx.principal.workspaceId,
      keys: await store.runIdsOfGroupRun(ctx.core.db, head.id),
      seconds: query.wait,
      signal: ctx.signal,
      settled: async () => {
        if (await store.groupRunHasOpenRuns(ctx.core.db, head.id, head.project_id)) return false;
        const now = await store.readGroupRun(ctx.core.db, head.id);
        return now === undefined || now.pending === "[]";
      },
    });
  }
  return groupRunDetail(ctx, project.id, head.id);
};

/** A group run as get_group_run answers it: with its runs, and what its queued ones wait for. */
export async function groupRunDetail(ctx: OpContext, projectId: string, groupRunId: string) {
  const { row, runs } = await loadGroupRun(ctx, projectId, groupRunId);
  // Its queued runs, as read already: snapshots are read only for those no engine of a server takes.
  const queued = runs.filter((r) => r.status === "queued").map((r): WaitingRun => ({ id: r.id, environmentId: r.environment_id }));
  return { ...toGroupRun(row, runs, true), waiting_for: groupWaitingFor(await waitingReasons(ctx, queued)) };
}

/** A run as get_run answers it: with its steps, and what it waits for while nothing connected can take it. */
async function runDetail(ctx: OpContext, row: RunRow) {
  const reasons = row.status === "queued" ? await waitingReasons(ctx, [{ id: row.id, environmentId: row.environment_id, specText: row.spec }]) : null;
  return { ...toRun(row, true), waiting_for: reasons?.get(row.id) ?? null };
}

/** "2 runs are waiting for a runner with the labels eu: none is connected", one sentence per distinct reason. */
function groupWaitingFor(reasons: Map<string, string>): string | null {
  const counts = new Map<string, number>();
  for (const reason of reasons.values()) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  if (counts.size === 0) return null;
  return [...counts].map(([reason, n]) => `${n} ${n === 1 ? "run is" : "runs are"} ${reason}`).join("; ");
}

export const getGroupRunJunit: Handler<O["getGroupRunJunit"]> = async (ctx, { params }) => {
  const project = await resolveProject(ctx, params.project);
  const { row, runs } = await loadGroupRun(ctx, project.id, params.groupRunId, true);
  const groupRun = toGroupRun(row, runs, true);
  // A sequential group run still going has automations whose turn has not come: reported too, as not run yet.
  const pending = row.status === null ? readJsonColumnOr(StringList, row.pending, []) : [];
  const automations = await automationStore.automationsAmong(ctx.core.db, project.id, pending);
  const waiting = pending.flatMap((id) => {
    const a = automations.find((x) => x.id === id);
    return a
      ? [{ id: "", automation_name: a.name, status: NOT_QUEUED_YET, duration_ms: null, error: null, finished_at: null, created_at: row.created_at }]
      : [];
  });
  return {
    body: groupRunJunit({ ...groupRun, runs: [...(groupRun.runs ?? []), ...waiting] }),
    contentType: "application/xml; charset=utf-8",
    filename: `${row.id}.xml`,
  };
};

/** A group run of a group, or of a batch that is not one (a feature's automations: no group id). */
export function newGroupRunRow(
  ctx: OpContext,
  projectId: string,
  group: { id: string | null; name: string },
  options: RunOptions,
  order: { mode: GroupRunRow["mode"]; stopOnFailure: boolean; pending: string[] } = { mode: "parallel", stopOnFailure: false, pending: [] },
): GroupRunRow {
  const t = nowIso();
  return {
    id: newId("grn"),
    project_id: projectId,
    group_id: group.id,
    group_name: group.name,
    trigger: ctx.principal.trigger,
    schedule_id: options.scheduleId ?? null,
    started_by: options.startedBy ?? null,
    status: null,
    summary: null,
    started_at: null,
    finished_at: null,
    environment_id: options.environmentId,
    variables: JSON.stringify(options.variables),
    metadata: JSON.stringify(options.metadata),
    mode: order.mode,
    stop_on_failure: order.stopOnFailure ? 1 : 0,
    pending: JSON.stringify(order.pending),
    created_at: t,
    updated_at: t,
  };
}

/** What the verdicts of these group runs are derived from: their runs' status, times, flakiness and quarantine. */
async function groupMembers(db: Kysely<DB>, groupRunIds: string[]): Promise<(GroupMember & { group_run_id: string | null })[]> {
  return (await store.runStatusesOfGroupRuns(db, groupRunIds)).map((r) => ({
    group_run_id: r.group_run_id,
    status: r.status,
    started_at: r.started_at,
    finished_at: r.finished_at,
    flaky: passedAfterRetry(r.status, r.attempts),
    quarantined: r.quarantined === 1,
  }));
}

/** The group runs of these runs (`groupRunIds` when the caller knows them) whose verdict is not stored yet. */
export async function unsettledGroupRunsOf(core: Core, runIds: string[], groupRunIds?: string[]): Promise<GroupRunRow[]> {
  return store.unsettledGroupRuns(core.db, groupRunIds ?? (await store.groupRunIdsOfRuns(core.db, runIds)));
}

/** Stores the verdict of each of these group runs whose last run has ended (once; later reads use it). */
export async function settleGroupRuns(db: Kysely<DB>, groupRunIds: string[]): Promise<void> {
  await settleUnsettledGroupRuns(db, await store.unsettledGroupRuns(db, groupRunIds));
}

/** As settleGroupRuns, for group runs the caller has just read unsettled. */
export async function settleUnsettledGroupRuns(db: Kysely<DB>, groups: GroupRunRow[]): Promise<void> {
  for (const g of groups) {
    // Most batches end runs of a group run that goes on: two index probes say so without reading its runs.
    if (pendingOf(g) > 0 || (await store.groupRunHasOpenRuns(db, g.id, g.project_id))) continue;
    const v = groupVerdict(await groupMembers(db, [g.id]), pendingOf(g));
    if (!v.finished) continue;
    await store.storeGroupRunVerdict(db, g.id, {
      status: v.status,
      summary: JSON.stringify(v.summary),
      started_at: v.started_at,
      finished_at: v.finished_at,
      updated_at: nowIso(),
    });
  }
}

/**
 * Inside the transaction that cancelled a group run's runs: its verdict is `cancelled`, whatever its runs say (a run
 * that failed before the cancel is still counted in the summary), stored over any verdict that transaction stored.
 */
export async function settleCancelledGroupRun(db: Kysely<DB>, groupRunId: string): Promise<void> {
  const v = groupVerdict(await groupMembers(db, [groupRunId]));
  await store.storeCancelledGroupRunVerdict(db, groupRunId, {
    summary: JSON.stringify(v.summary),
    started_at: v.started_at,
    finished_at: v.finished_at,
    updated_at: nowIso(),
  });
}

/**
 * Starts a group run of `automations` inside the caller's transaction (a group's, a selection, or a batch such as a
 * feature's) and answers it as get_group_run would, its runs queued. A sequential one queues only the first run;
 * the others follow one by one as each ends (sequence.ts).
 */
export async function startGroupRun(
  ctx: OpContext,
  trx: Transaction<DB>,
  input: {
    projectId: string;
    group: { id: string | null; name: string };
    automations: Parameters<typeof enqueueRuns>[2]["automations"];
    options: RunOptions;
    mode?: GroupRunRow["mode"];
    stopOnFailure?: boolean;
  },
) {
  const sequential = input.mode === "sequential" && input.automations.length > 1;
  const [first, ...rest] = input.automations;
  const now = sequential && first ? [first] : input.automations;
  const options = { ...input.options, startedBy: input.options.startedBy ?? (await startedByOf(ctx, trx, input.options.scheduleId)) };
  const gr = newGroupRunRow(ctx, input.projectId, input.group, options, {
    mode: input.mode ?? "parallel",
    stopOnFailure: input.stopOnFailure ?? false,
    pending: sequential ? rest.map((a) => a.id) : [],
  });
  await store.insertGroupRun(trx, gr);
  await store.insertMetadata(trx, [gr.id], input.options.metadata);
  const queued = await enqueueRuns(ctx, trx, { projectId: input.projectId, groupRunId: gr.id, automations: now, ...options });
  // Checked for every automation now, not when its turn comes: a refusal is the request's, not a later run's.
  if (sequential) {
    const envIds = rest.map((a) => input.options.environmentId ?? a.environment_id);
    await assertMayRunIn(ctx, trx, envIds);
    await assertNoShadowedSecrets(trx, envIds, input.options.variables);
    keepOneRunSecrets(ctx.core, gr.id, input.options.secrets);
  }
  // Answered from the rows just written (reading a thousand runs back cost a fifth of a large group run's start).
  const retries = new Map(now.map((a) => [a.id, a.retries]));
  return toGroupRun(
    gr,
    queued.map((r) => toRun({ ...r, retries: retries.get(r.automation_id) ?? null }, false)),
    true,
  );
}
