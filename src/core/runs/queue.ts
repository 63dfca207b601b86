// The database side of the run queue: claiming runs atomically, recording progress and attempts, finishing
// many runs in one transaction, and recovering runs a dead process left `running`.
import { sql } from "kysely";
import type { Core } from "../context";
import { protectedHosts } from "../environments/protection";
import { openSecrets } from "../environments/secrets";
import { RunSpecColumn, StringMap } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import { nowIso } from "../shared/time";
import type { StoredEnvironment } from "../storage";
import type { RunSpec } from "../shared/columns";

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

function runEnvironment(core: Core, e: StoredEnvironment): RunEnvironment {
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
 * Marks up to `limit` of the oldest queued runs `running` in one statement, so no two workers get the same run.
 * Ordered by created_at alone so the (status, created_at) index gives the order without sorting the queue.
 */
export async function claimQueuedRuns(core: Core, limit: number): Promise<ClaimedRun[]> {
  if (limit <= 0) return [];
  const t = nowIso();
  const { runs: rows, environments } = await core.queue.claimQueuedRuns(t, limit);
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
  await core.queue.finishRuns(t, rows);
}

/** Saves the steps reached so far (long runs show progress; a crash keeps what was done). */
export async function recordRunProgress(
  core: Core,
  run: { id: string; claim: number },
  progress: { resultsJson: string; summary: RunSummaryCounts; attempts: RunAttempt[] },
): Promise<void> {
  await sql`UPDATE runs SET results = ${progress.resultsJson}, summary = ${JSON.stringify(progress.summary)},
      attempts = ${JSON.stringify(progress.attempts)}, updated_at = ${nowIso()}
    WHERE id = ${run.id} AND status = 'running' AND claim = ${run.claim}`.execute(core.db);
}

export const INTERRUPTED_MESSAGE = "interrupted by server restart";

/**
 * At start, no run can really be running: finishes those a dead process left `running` as `error`. They are not
 * re-queued, because a step may already have changed the system under test.
 */
export async function recoverInterruptedRuns(core: Core): Promise<string[]> {
  const t = nowIso();
  return core.db.transaction().execute(async (trx) => {
    const stale = await trx.selectFrom("runs").select(["id", "automation_id", "started_at"]).where("status", "=", "running").execute();
    for (const r of stale) {
      await trx
        .updateTable("runs")
        .set({
          status: "error",
          error: INTERRUPTED_MESSAGE,
          finished_at: t,
          updated_at: t,
          duration_ms: r.started_at ? Math.max(0, Date.parse(t) - Date.parse(r.started_at)) : null,
        })
        .where("id", "=", r.id)
        .where("status", "=", "running")
        .execute();
      await trx
        .updateTable("automations")
        .set({ last_run_status: "error", last_run_at: t })
        .where("id", "=", r.automation_id)
        .where("last_run_id", "=", r.id)
        .execute();
    }
    return stale.map((r) => r.id);
  });
}
