// The database side of the run queue: claiming runs atomically, recording progress and attempts, finishing
// many runs in one transaction, and recovering runs a dead process left `running`.
import { recordEndedRuns, recordFinishedRuns } from "../alerts/state";
import type { Core } from "../context";
import { protectedHosts } from "../environments/protection";
import { openSecrets } from "../environments/secrets";
import { AttemptsColumn, readRunSpec, StringList, StringMap } from "../shared/columns";
import { keepOneRunSecrets, takeOneRunSecrets } from "./one-run-secrets";
import { advanceSequentialGroupRuns } from "./sequence";
import { readJsonColumnOr } from "../shared/json";
import { nowIso } from "../shared/time";
import type { ClaimedRunRow, FinishedRun, StoredEnvironment } from "../storage";
import type { RunSpec } from "../shared/columns";
import { countInDailies, rollUpRuns } from "../history/operations";
import { settleGroupRuns, settleUnsettledGroupRuns, unsettledGroupRunsOf } from "./operations";
import * as store from "./store";

export type FinalRunStatus = "passed" | "failed" | "error" | "timed_out" | "cancelled";

export interface RunAttempt {
  attempt: number;
  status: FinalRunStatus;
  error: string | null;
  /** What went wrong in the attempt in one line (secrets masked); null when it passed. */
  message: string | null;
  duration_ms: number;
}

export interface RunSummaryCounts {
  steps: number;
  passed: number;
  failed: number;
  skipped: number;
}

export interface RunEnvironment {
  name: string;
  variables: Record<string, string>;
  secrets: Record<string, string>;
  /** Secrets whose stored value does not open with the server's key: the run cannot use them. */
  unreadableSecrets: string[];
  /** For a protected environment, the hosts its secrets may go to (its allowed_hosts, or its BASE_URL's host). */
  secretHosts: string[] | null;
}

export interface ClaimedRun {
  id: string;
  /** The fencing token: only the holder of this claim may finish the run. */
  claim: number;
  projectId: string;
  automationId: string;
  automationName: string;
  startedAt: string;
  spec: RunSpec | null;
  /** The snapshot as stored: a key for caching what was derived from it. */
  specText: string;
  environmentId: string | null;
  /** null when the run names an environment that has since been deleted, or none at all. */
  environment: RunEnvironment | null;
  /** The one-run secrets the claim took (kept again if the run goes back to the queue unstarted). */
  oneRunSecrets: Record<string, string>;
  /** Attempts made before this claim (a runner was lost while executing it): they count against its retries. */
  priorAttempts: RunAttempt[];
}

export interface RunOutcome {
  id: string;
  claim: number;
  automationId: string;
  status: FinalRunStatus;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  error: string | null;
  /** For a failed run, its first failed step in one line (secrets masked), for the log. */
  failure?: string;
  summary: RunSummaryCounts;
  /** Already JSON: `{steps, artifacts}`, secrets masked. */
  resultsJson: string;
  attempts: RunAttempt[];
}

export function runEnvironment(core: Core, e: StoredEnvironment): RunEnvironment {
  // Claimed runs are already marked running: a damaged environment must not fail the claim of the others.
  const variables = readJsonColumnOr(StringMap, e.variables, {});
  const opened = openSecrets(core.secrets, e);
  return {
    name: e.name,
    variables,
    secrets: opened.values,
    unreadableSecrets: opened.unreadable,
    secretHosts: e.protected === 1 ? protectedHosts(e.allowed_hosts, opened.values.BASE_URL ?? variables.BASE_URL) : null,
  };
}

/**
 * Marks up to `limit` queued runs `running` in one statement, so no two workers get the same run. Fair between
 * workspaces: one workspace's backlog never holds another's run for more than one slot's turn (see the store),
 * and `runner.workspace_concurrency` caps how many of one workspace's runs run at once.
 */
export async function claimQueuedRuns(core: Core, limit: number): Promise<ClaimedRun[]> {
  if (limit <= 0) return [];
  const t = nowIso();
  const { runs: rows, environments } = await core.queue.claimQueuedRuns(t, limit, core.config.runner.workspace_concurrency);
  if (rows.length === 0) return [];
  await renewNodeLeases(
    core,
    rows.map((r) => r.id),
  );
  const envs = new Map<string, RunEnvironment>();
  for (const [id, e] of environments) envs.set(id, runEnvironment(core, e));
  rows.sort((a, b) => (a.id < b.id ? -1 : 1));
  return (await withRunRequests(core, rows, envs)).map(({ row: r, environment, oneRunSecrets }) => ({
    id: r.id,
    claim: r.claim,
    projectId: r.project_id,
    automationId: r.automation_id,
    automationName: r.automation_name,
    startedAt: r.started_at,
    spec: readRunSpec(r.spec),
    specText: r.spec,
    environmentId: r.environment_id,
    environment,
    oneRunSecrets,
    priorAttempts: priorAttempts(r.attempts),
  }));
}

/** The attempts a claimed row carries from before its claim ("[]" for nearly every run: nothing to parse). */
export function priorAttempts(stored: string): RunAttempt[] {
  if (stored === "[]") return [];
  return readJsonColumnOr(AttemptsColumn, stored, []).map((a) => ({ ...a, status: a.status as FinalRunStatus, message: a.message ?? a.error }));
}

/**
 * Each claimed run (by this server's engine or a remote runner) with the environment it executes in: its stored
 * environment with the request's per-run variables and one-run secrets. A run whose one-run secrets are gone (a
 * restart since it was queued) is ended as error here and left out.
 */
export async function withRunRequests(
  core: Core,
  rows: ClaimedRunRow[],
  envs: Map<string, RunEnvironment>,
): Promise<{ row: ClaimedRunRow; environment: RunEnvironment | null; oneRunSecrets: Record<string, string> }[]> {
  const claimed: { row: ClaimedRunRow; environment: RunEnvironment | null; oneRunSecrets: Record<string, string> }[] = [];
  const lost: RunOutcome[] = [];
  for (const r of rows) {
    // Read from the claimed row itself: the claim returns them, no second look at the runs is needed.
    const variables = r.variables === "{}" ? {} : readJsonColumnOr(StringMap, r.variables, {});
    const secretNames = r.one_run_secrets === "[]" ? [] : readJsonColumnOr(StringList, r.one_run_secrets, []);
    const secrets = takeOneRunSecrets(core, r.id) ?? {};
    const missing = secretNames.filter((n) => !Object.hasOwn(secrets, n));
    if (missing.length > 0) {
      lost.push(lostSecretsOutcome(r, missing));
      continue;
    }
    const shared = r.environment_id ? (envs.get(r.environment_id) ?? null) : null;
    claimed.push({ row: r, environment: withRunOverrides(shared, r.environment_id, variables, secrets), oneRunSecrets: secrets });
  }
  if (lost.length > 0) await finishRuns(core, lost);
  return claimed;
}

/**
 * The environment a run executes in: its environment's, with the request's per-run variables over its variables and
 * its one-run secrets beside its secrets. Where secrets may be sent stays the stored environment's (a per-run
 * BASE_URL does not widen it). A run in an environment that no longer exists stays without one (the engine says so).
 */
function withRunOverrides(
  shared: RunEnvironment | null,
  environmentId: string | null,
  variables: Record<string, string>,
  secrets: Record<string, string>,
): RunEnvironment | null {
  if (Object.keys(variables).length === 0 && Object.keys(secrets).length === 0) return shared;
  if (environmentId !== null && shared === null) return null;
  const base = shared ?? { name: "", variables: {}, secrets: {}, unreadableSecrets: [], secretHosts: null };
  return { ...base, variables: { ...base.variables, ...variables }, secrets: { ...base.secrets, ...secrets } };
}

/** A run whose one-run secrets were lost (the server restarted after it was queued) ends as error, not run. */
function lostSecretsOutcome(r: { id: string; claim: number; automation_id: string; started_at: string }, missing: string[]): RunOutcome {
  const error = `its one-run secrets (${missing.join(", ")}) are gone: they are never stored, and the server restarted before the run started; start it again`;
  return {
    id: r.id,
    claim: r.claim,
    automationId: r.automation_id,
    status: "error",
    startedAt: r.started_at,
    finishedAt: nowIso(),
    durationMs: 0,
    error,
    summary: { steps: 0, passed: 0, failed: 0, skipped: 0 },
    resultsJson: "{}",
    attempts: [{ attempt: 1, status: "error", error, message: error, duration_ms: 0 }],
  };
}

/**
 * Writes many finished runs in one transaction. A run that is no longer `running` under this claim (cancelled,
 * or claimed again after a restart) is not overwritten; a cancelled run still gets the step results it reached.
 * The automation's last run is updated only if it is still this run (a newer queued run keeps its own status).
 */
export async function finishRuns(core: Core, outcomes: RunOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const t = nowIso();
  const rows = outcomes.map((o) => ({
    id: o.id,
    claim: o.claim,
    automationId: o.automationId,
    status: o.status,
    startedAt: o.startedAt,
    finishedAt: o.finishedAt,
    durationMs: o.durationMs,
    error: o.error,
    summaryJson: JSON.stringify(o.summary),
    resultsJson: o.resultsJson,
    attemptsJson: JSON.stringify(o.attempts),
  }));
  let queued = 0;
  let finishedRows: FinishedRun[] = [];
  await core.queue.finishRuns(t, rows, async (trx, finished) => {
    queued = await recordFinishedRuns(core, trx, finished, t);
    finishedRows = finished;
    // Counted in the same transaction: a run read as ended is already in its automation's health and history.
    await countInDailies(trx, finished);
  });
  core.events.emit(
    "runsFinished",
    rows.map((r) => r.id),
  );
  if (queued > 0) core.events.emit("alertsQueued");
  const rolledUp = new Set(finishedRows.map((r) => r.id));
  // The finishing statement named every run's group run, unless some were not finished by it (cancelled meanwhile).
  const groupRunIds =
    finishedRows.length === outcomes.length ? [...new Set(finishedRows.flatMap((r) => (r.group_run_id === null ? [] : [r.group_run_id])))] : undefined;
  await afterRunsEnded(
    core,
    outcomes.map((o) => o.id),
    rolledUp,
    groupRunIds,
  );
}

/**
 * Runs this server's engine claimed but never started go back to the queue, to be claimed again in turn (their
 * one-run secrets were taken with the claim: kept again for the next one).
 */
export async function releaseClaimedRuns(core: Core, runs: ClaimedRun[]): Promise<void> {
  if (runs.length === 0) return;
  for (const r of runs) keepOneRunSecrets(core, r.id, r.oneRunSecrets);
  await core.db.transaction().execute((trx) => store.releaseUnstartedRuns(trx, runs, nowIso()));
  core.events.emit("runQueued");
}

/**
 * Runs ended outside finishRuns (a lost runner's, by its lease): waiting clients hear it, and everything that
 * follows a run's end happens as it does for runs finished by an engine. `alertsWritten` counts the outbox rows
 * the caller wrote in its own transaction (recordEndedRuns).
 */
export async function runsEndedElsewhere(core: Core, runIds: string[], alertsWritten: number): Promise<void> {
  if (runIds.length === 0) return;
  core.events.emit("runsFinished", runIds);
  if (alertsWritten > 0) core.events.emit("alertsQueued");
  await afterRunsEnded(core, runIds);
}

/**
 * What follows runs ending: the next run of their sequential group runs (or their stop), their daily roll-ups and
 * health, their group runs' verdicts, and retention's notice. `groupRunIds`: the group runs of these runs, when the
 * caller knows them (else they are read).
 */
export async function afterRunsEnded(core: Core, runIds: string[], rolledUp: ReadonlySet<string> = new Set(), groupRunIds?: string[]): Promise<void> {
  const groupRuns = await unsettledGroupRunsOf(core, runIds, groupRunIds);
  // Only a sequential group run has automations yet to queue: most batches end runs of none.
  const sequential = groupRuns.some((g) => g.pending !== "[]");
  if (sequential) {
    // A sequential group run that ends here (stopped, or nothing left to queue) moves its alert state then.
    let alerts = 0;
    const queued = await advanceSequentialGroupRuns(core, runIds, async (trx, runId) => {
      alerts += await recordEndedRuns(core, trx, [runId], nowIso());
    });
    if (queued) core.events.emit("runQueued");
    if (alerts > 0) core.events.emit("alertsQueued");
  }
  // Runs the finishing transaction counted already need no second look.
  const unrolled = runIds.filter((id) => !rolledUp.has(id));
  if (unrolled.length > 0) await rollUpRuns(core.db, { ids: unrolled });
  // A sequential group run may have queued its next run since they were read: read again then.
  if (sequential)
    await settleGroupRuns(
      core.db,
      groupRuns.map((g) => g.id),
    );
  else await settleUnsettledGroupRuns(core.db, groupRuns);
  core.events.emit("runsEnded", runIds);
}

/** Saves the steps reached so far (long runs show progress; a crash keeps what was done). */
export async function recordRunProgress(
  core: Core,
  run: { id: string; claim: number },
  progress: { resultsJson: string; summary: RunSummaryCounts; attempts: RunAttempt[] },
): Promise<void> {
  await store.saveRunProgress(core.db, run, {
    resultsJson: progress.resultsJson,
    summaryJson: JSON.stringify(progress.summary),
    attemptsJson: JSON.stringify(progress.attempts),
    at: nowIso(),
  });
}

export const INTERRUPTED_MESSAGE = "interrupted by server restart";
export const NODE_LOST_MESSAGE = "node lost: the server executing it stopped renewing its lease";

/**
 * Several nodes share the queue on PostgreSQL: a node holds the runs its engine executes under a lease
 * (`runner.lease_ms`) it renews while it runs them, and a node that dies (SIGKILL, a lost machine) leaves runs
 * that any node ends once the lease lapses. On SQLite one process owns the file, and a start ends them all.
 */
const nodeLeases = (core: Core) => core.probe.backend === "postgres";

/**
 * Of runs executed under these claims — by `runnerId`, or by a server's own engine (null) — those stopped
 * elsewhere: cancelled (or deleted with what they belong to), or taken from their executor (ended, or claimed
 * again). A runner hears it in its heartbeat's answer; an engine looks when the database changed elsewhere (see
 * RunEngine.checkStoppedElsewhere), since such a change comes with no event in its process.
 */
export async function runsStoppedElsewhere(
  core: Core,
  runs: { id: string; claim: number }[],
  runnerId: string | null = null,
): Promise<{ cancelled: string[]; takenBack: string[] }> {
  const rows = new Map(
    (
      await store.runHolders(
        core.db,
        runs.map((r) => r.id),
      )
    ).map((r) => [r.id, r]),
  );
  const cancelled: string[] = [];
  const takenBack: string[] = [];
  for (const r of runs) {
    const row = rows.get(r.id);
    if (!row) cancelled.push(r.id);
    else if (row.runner_id !== runnerId || row.claim !== r.claim) takenBack.push(r.id);
    else if (row.status === "cancelled") cancelled.push(r.id);
    else if (row.status !== "running") takenBack.push(r.id);
  }
  return { cancelled, takenBack };
}

/** Renews this node's lease on the runs its engine holds (PostgreSQL; nothing to do on SQLite). */
export async function renewNodeLeases(core: Core, runIds: string[]): Promise<void> {
  if (!nodeLeases(core) || runIds.length === 0) return;
  await store.renewLocalLeases(core.db, runIds, new Date(Date.now() + core.config.runner.lease_ms).toISOString());
}

/** Ends as error the runs of nodes that stopped renewing their leases (PostgreSQL). */
export async function sweepLostNodeRuns(core: Core): Promise<string[]> {
  if (!nodeLeases(core)) return [];
  return endLocalRuns(core, NODE_LOST_MESSAGE, true);
}

/**
 * At start, no run of this process can really be running: finishes those a dead process left `running` as `error`
 * (on PostgreSQL, only those whose node's lease lapsed: the others belong to live nodes). They are not re-queued,
 * because a step may already have changed the system under test.
 */
export async function recoverInterruptedRuns(core: Core): Promise<string[]> {
  return endLocalRuns(core, nodeLeases(core) ? NODE_LOST_MESSAGE : INTERRUPTED_MESSAGE, nodeLeases(core));
}

async function endLocalRuns(core: Core, message: string, onlyLost: boolean): Promise<string[]> {
  const t = nowIso();
  const lost = onlyLost ? { now: t, startedBefore: new Date(Date.now() - core.config.runner.lease_ms).toISOString() } : undefined;
  const recovered = await core.db.transaction().execute(async (trx) => {
    // Runs held by remote runners are not this process's: their leases end them if their runner is gone too.
    const stale = await store.locallyRunningRuns(trx, lost);
    for (const r of stale) {
      await store.endRunningRunWithError(trx, r.id, {
        error: message,
        finished_at: t,
        updated_at: t,
        duration_ms: r.started_at ? Math.max(0, Date.parse(t) - Date.parse(r.started_at)) : null,
      });
      await store.markLastRunErrored(trx, r.automation_id, r.id, t);
    }
    const ids = stale.map((r) => r.id);
    // A run a lost node held ends while the others run: its alerts are written with it, as for a lost runner's.
    return { ids, alerts: onlyLost && ids.length > 0 ? await recordEndedRuns(core, trx, ids, t) : 0 };
  });
  if (onlyLost) await runsEndedElsewhere(core, recovered.ids, recovered.alerts);
  // A sequential group run goes on (or stops) after its interrupted run, as after any run that ended.
  else await afterRunsEnded(core, recovered.ids);
  return recovered.ids;
}
