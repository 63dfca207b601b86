// The database side of the run queue: claiming runs atomically, recording progress and attempts, finishing
// many runs in one transaction, and recovering runs a dead process left `running`.
import { sql } from "kysely";
import type { Core } from "../context";
import { parseJson } from "../shared/json";
import { nowIso } from "../shared/time";
import type { RunSpec } from "./operations";

export type FinalRunStatus = "passed" | "failed" | "error" | "timed_out" | "cancelled";

export interface RunAttempt {
  attempt: number;
  status: FinalRunStatus;
  error: string | null;
  duration_ms: number;
}

export interface RunSummaryCounts {
  steps: number;
  passed: number;
  failed: number;
  skipped: number;
}

export interface RunEnvironment {
  variables: Record<string, string>;
  secrets: Record<string, string>;
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
  summary: RunSummaryCounts;
  /** Already JSON: `{steps, artifacts}`, secrets masked. */
  resultsJson: string;
  attempts: RunAttempt[];
}

interface ClaimRow {
  id: string;
  claim: number;
  project_id: string;
  automation_id: string;
  automation_name: string;
  started_at: string;
  spec: string;
  environment_id: string | null;
}

/**
 * The hot statements run on the raw connection with cached prepared statements (Kysely's query building was a
 * third of the per-run cost). They run while holding Kysely's connection, so they never interleave with a
 * Kysely transaction of another request.
 */
function withConnection<T>(core: Core, work: () => T): Promise<T> {
  return core.db.connection().execute(async () => work());
}

/**
 * Marks up to `limit` of the oldest queued runs `running` in one statement, so no two workers get the same run.
 * Ordered by created_at alone so the (status, created_at) index gives the order without sorting the queue.
 */
export async function claimQueuedRuns(core: Core, limit: number): Promise<ClaimedRun[]> {
  if (limit <= 0) return [];
  const t = nowIso();
  const { rows, envs } = await withConnection(core, () => {
    const claimed = core.sqlite
      .query<ClaimRow, [string, string, number]>(
        `UPDATE runs SET status = 'running', claim = claim + 1, started_at = ?1, updated_at = ?2
         WHERE id IN (SELECT id FROM runs WHERE status = 'queued' ORDER BY created_at LIMIT ?3)
         RETURNING id, claim, project_id, automation_id, automation_name, started_at, spec, environment_id`,
      )
      .all(t, t, limit);
    const found = new Map<string, RunEnvironment>();
    const envQuery = core.sqlite.query<{ variables: string; secrets: string }, [string]>("SELECT variables, secrets FROM environments WHERE id = ?1");
    for (const r of claimed) {
      if (r.environment_id === null || found.has(r.environment_id)) continue;
      const e = envQuery.get(r.environment_id);
      if (e) found.set(r.environment_id, { variables: parseJson(e.variables, {}), secrets: parseJson(e.secrets, {}) });
    }
    return { rows: claimed, envs: found };
  });
  if (rows.length === 0) return [];
  // Read caches key on a change counter that only sees writes sent through Kysely.
  core.changes.noteWrite();
  rows.sort((a, b) => (a.id < b.id ? -1 : 1));
  return rows.map((r) => ({
    id: r.id, claim: r.claim, projectId: r.project_id, automationId: r.automation_id, automationName: r.automation_name,
    startedAt: r.started_at, spec: parseJson<RunSpec | null>(r.spec, null), specText: r.spec, environmentId: r.environment_id,
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
  const db = core.sqlite;
  const finish = db.query(
    `UPDATE runs SET status = ?1, finished_at = ?2, duration_ms = ?3, summary = ?4, error = ?5, results = ?6, attempts = ?7, updated_at = ?8
     WHERE id = ?9 AND status = 'running' AND claim = ?10`,
  );
  const keepCancelled = db.query(
    "UPDATE runs SET results = ?1, summary = ?2, attempts = ?3, updated_at = ?4 WHERE id = ?5 AND claim = ?6 AND status = 'cancelled'",
  );
  const lastRun = db.query("UPDATE automations SET last_run_status = ?1, last_run_at = ?2 WHERE id = ?3 AND last_run_id = ?4");
  const writeAll = db.transaction((batch: RunOutcome[]) => {
    for (const o of batch) {
      const summary = JSON.stringify(o.summary);
      const attempts = JSON.stringify(o.attempts);
      if (o.status === "cancelled") {
        keepCancelled.run(o.resultsJson, summary, attempts, t, o.id, o.claim);
        continue;
      }
      const r = finish.run(o.status, o.finishedAt, o.durationMs, summary, o.error, o.resultsJson, attempts, t, o.id, o.claim);
      if (r.changes > 0) lastRun.run(o.status, o.finishedAt, o.automationId, o.id);
    }
  });
  await withConnection(core, () => writeAll(outcomes));
  core.changes.noteWrite();
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
      await trx.updateTable("runs")
        .set({
          status: "error", error: INTERRUPTED_MESSAGE, finished_at: t, updated_at: t,
          duration_ms: r.started_at ? Math.max(0, Date.parse(t) - Date.parse(r.started_at)) : null,
        })
        .where("id", "=", r.id).where("status", "=", "running").execute();
      await trx.updateTable("automations").set({ last_run_status: "error", last_run_at: t })
        .where("id", "=", r.automation_id).where("last_run_id", "=", r.id).execute();
    }
    return stale.map((r) => r.id);
  });
}
