// The database side of the run queue: claiming runs atomically, recording progress and attempts, finishing
// many runs in one transaction, and recovering runs a dead process left `running`.
import { recordFinishedRuns } from "../alerts/state";
import type { Core } from "../context";
import { protectedHosts } from "../environments/protection";
import { openSecrets } from "../environments/secrets";
import { RunSpecColumn, StringMap } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import { nowIso } from "../shared/time";
import type { StoredEnvironment } from "../storage";
import type { RunSpec } from "../shared/columns";
import { rollUpRuns, rollUpRunsIn } from "../history/operations";
import { settleGroupRuns } from "./operations";
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

/** Snapshots read once per distinct text: the same automations are run again and again (group runs, schedules). */
const specs = new Map<string, RunSpec | null>();
function readSpec(text: string): RunSpec | null {
  const hit = specs.get(text);
  if (hit !== undefined) return hit;
  const spec: RunSpec | null = readJsonColumnOr(RunSpecColumn, text, null);
  if (specs.size >= 5000) specs.clear();
  specs.set(text, spec);
  return spec;
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
  const envs = new Map<string, RunEnvironment>();
  for (const [id, e] of environments) envs.set(id, runEnvironment(core, e));
  rows.sort((a, b) => (a.id < b.id ? -1 : 1));
  return rows.map((r) => ({
    id: r.id,
    claim: r.claim,
    projectId: r.project_id,
    automationId: r.automation_id,
    automationName: r.automation_name,
    startedAt: r.started_at,
    spec: readSpec(r.spec),
    specText: r.spec,
    environmentId: r.environment_id,
    environment: r.environment_id ? (envs.get(r.environment_id) ?? null) : null,
  }));
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
    finishedAt: o.finishedAt,
    durationMs: o.durationMs,
    error: o.error,
    summaryJson: JSON.stringify(o.summary),
    resultsJson: o.resultsJson,
    attemptsJson: JSON.stringify(o.attempts),
  }));
  let queued = 0;
  await core.queue.finishRuns(t, rows, async (trx, finished) => {
    queued = await recordFinishedRuns(core, trx, finished, t);
    // Counted in the same transaction: a run read as ended is already in its automation's health and history.
    await rollUpRunsIn(trx, { ids: finished });
  });
  core.events.emit(
    "runsFinished",
    rows.map((r) => r.id),
  );
  if (queued > 0) core.events.emit("alertsQueued");
  await afterRunsEnded(
    core,
    outcomes.map((o) => o.id),
  );
}

/** What follows runs ending: their daily roll-ups and health, their group runs' verdicts, and retention's notice. */
async function afterRunsEnded(core: Core, runIds: string[]): Promise<void> {
  await rollUpRuns(core.db, { ids: runIds });
  await settleGroupRuns(core.db, runIds);
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

/**
 * At start, no run can really be running: finishes those a dead process left `running` as `error`. They are not
 * re-queued, because a step may already have changed the system under test.
 */
export async function recoverInterruptedRuns(core: Core): Promise<string[]> {
  const t = nowIso();
  const recovered = await core.db.transaction().execute(async (trx) => {
    // Runs held by remote runners are not this process's: their leases end them if their runner is gone too.
    const stale = await store.locallyRunningRuns(trx);
    for (const r of stale) {
      await store.endRunningRunWithError(trx, r.id, {
        error: INTERRUPTED_MESSAGE,
        finished_at: t,
        updated_at: t,
        duration_ms: r.started_at ? Math.max(0, Date.parse(t) - Date.parse(r.started_at)) : null,
      });
      await store.markLastRunErrored(trx, r.automation_id, r.id, t);
    }
    return stale.map((r) => r.id);
  });
  await afterRunsEnded(core, recovered);
  return recovered;
}
