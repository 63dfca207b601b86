// The row of a run as it is queued (or recorded as not run): the automation's snapshot and the request's options.
import type { Selectable } from "kysely";
import type { RunTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { Trigger } from "../context";
import { type RunSpec, StepsColumn } from "../shared/columns";
import { TextMemo } from "../../memo";
import { readJsonColumn } from "../shared/json";

export type RunRow = Selectable<RunTable>;

/** What a run request asks beside what to run: the environment, per-run variables, one-run secrets, CI metadata. */
export interface RunOptions {
  /** null: each automation's default environment. */
  environmentId: string | null;
  variables: Record<string, string>;
  /** Never stored: kept in memory for the run engine (one-run-secrets.ts). */
  secrets: Record<string, string>;
  metadata: Record<string, string>;
  /** The schedule starting the runs, if one is. */
  scheduleId?: string | null;
  /** Who or what starts them, as stored (JSON {kind, name}); set once by the core where the request is known. */
  startedBy?: string | null;
}

export interface RunnableAutomation {
  id: string;
  name: string;
  kind: RunSpec["kind"];
  steps: string;
  timeout_ms: number;
  retries: number;
  environment_id: string | null;
  /** 1 when the automation is quarantined: its run is marked so as it is queued. */
  quarantined?: number;
}

const EMPTY_SUMMARY = JSON.stringify({ steps: 0, passed: 0, failed: 0, skipped: 0 });

/**
 * An automation's steps as its runs' snapshots hold them (checked against the steps' schema, then JSON), by the
 * stored text: checked once per distinct text. A group run reads the same automations at every start, and checking
 * a thousand automations' steps again was a fifth of the start of a thousand-run group run. Only strings are kept,
 * so no caller can change what another gets.
 */
const snapshotSteps = new TextMemo<string>(5000);

function stepsSnapshot(a: RunnableAutomation): string {
  return snapshotSteps.get(a.steps, () => JSON.stringify(readJsonColumn(StepsColumn, a.steps, `steps of automation ${a.id}`)));
}

/** The run's snapshot: as JSON.stringify of {kind, steps, timeout_ms, retries} writes it, with the steps' JSON as kept. */
function specText(a: RunnableAutomation): string {
  return `{"kind":${JSON.stringify(a.kind)},"steps":${stepsSnapshot(a)},"timeout_ms":${JSON.stringify(a.timeout_ms)},"retries":${JSON.stringify(a.retries)}}`;
}

export function runRow(
  a: RunnableAutomation,
  at: {
    projectId: string;
    groupRunId: string | null;
    position: number;
    trigger: Trigger;
    options: RunOptions;
    now: string;
    /** A run recorded as not run (a stopped sequential group run): cancelled, with why. */
    notRun?: string;
    /** The names of its one-run secrets, when they are not all still in memory (a sequential group run's later runs). */
    secretNames?: string[];
  },
): RunRow {
  const o = at.options;
  return {
    id: newId("run"),
    project_id: at.projectId,
    automation_id: a.id,
    automation_name: a.name,
    group_run_id: at.groupRunId,
    environment_id: o.environmentId ?? a.environment_id,
    trigger: at.trigger,
    schedule_id: o.scheduleId ?? null,
    started_by: o.startedBy ?? null,
    status: at.notRun ? "cancelled" : "queued",
    spec: specText(a),
    attempts: "[]",
    started_at: null,
    finished_at: at.notRun ? at.now : null,
    duration_ms: null,
    summary: EMPTY_SUMMARY,
    error: at.notRun ?? null,
    results: "{}",
    claim: 0,
    position: at.position,
    runner_id: null,
    lease_expires_at: null,
    runner_started_at: null,
    runner_losses: 0,
    quarantined: a.quarantined === 1 ? 1 : 0,
    rolled_up: 0,
    variables: JSON.stringify(o.variables),
    metadata: JSON.stringify(o.metadata),
    one_run_secrets: JSON.stringify(at.secretNames ?? Object.keys(o.secrets).sort()),
    created_at: at.now,
    updated_at: at.now,
  };
}
