// Retention: removes runs older than `retention.run_days` and an automation's runs beyond
// `retention.max_runs_per_automation`, with their artifacts, in small batches. A run of a group run takes its whole
// group run with it (never part of one, so an old group run's verdict and JUnit never change), and every run is
// counted in the daily roll-ups before it goes, so history outlives it.
import { rmSync } from "node:fs";
import type { Core } from "../context";
import { artifactDir } from "../runs/artifacts";
import { rollUpRuns } from "./operations";
import * as store from "./retention-store";

export interface PruneResult {
  runs: number;
  groupRuns: number;
}

const DAY_MS = 86_400_000;

/** Removes these runs' whole group runs with them (a group run with a run still active waits for a later batch). */
async function removeRuns(core: Core, picked: { id: string; group_run_id: string | null }[]): Promise<PruneResult> {
  const groupRunIds = [...new Set(picked.map((r) => r.group_run_id).filter((x): x is string => x !== null))];
  const members = await store.runsOfGroupRuns(core.db, groupRunIds);
  const busy = new Set(members.filter((m) => m.status === "queued" || m.status === "running").map((m) => m.group_run_id));
  const groups = groupRunIds.filter((g) => !busy.has(g));
  const ids = [
    ...new Set([
      ...picked.filter((r) => r.group_run_id === null).map((r) => r.id),
      ...members.filter((m) => m.group_run_id !== null && !busy.has(m.group_run_id)).map((m) => m.id),
    ]),
  ];
  if (ids.length === 0) return { runs: 0, groupRuns: 0 };
  await rollUpRuns(core.db, { ids });
  const runs = await core.db.transaction().execute((trx) => store.deleteRunsAndGroupRuns(trx, ids, groups));
  for (const id of ids) rmSync(artifactDir(core.config.data_dir, id), { recursive: true, force: true });
  return { runs, groupRuns: groups.length };
}

/** Runs past the age limit, one batch (up to `batch` runs and their group runs). */
export async function pruneOldBatch(core: Core, batch: number, now = Date.now()): Promise<PruneResult> {
  const days = core.config.retention.run_days;
  if (days <= 0) return { runs: 0, groupRuns: 0 };
  return removeRuns(core, await store.runsCreatedBefore(core.db, new Date(now - days * DAY_MS).toISOString(), batch));
}

/** Whether a run is past the age limit now (an indexed look, cheap enough to ask every few seconds). */
export async function anyRunPastAge(core: Core, now = Date.now()): Promise<boolean> {
  const days = core.config.retention.run_days;
  if (days <= 0) return false;
  return store.anyRunCreatedBefore(core.db, new Date(now - days * DAY_MS).toISOString());
}

/** An automation's runs beyond the count limit, one batch. */
export async function pruneExtraBatch(core: Core, automationId: string, batch: number): Promise<PruneResult> {
  const max = core.config.retention.max_runs_per_automation;
  if (max <= 0) return { runs: 0, groupRuns: 0 };
  return removeRuns(core, await store.runsBeyond(core.db, automationId, max, batch));
}

const yieldToRequests = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Prunes batch after batch until nothing is past a limit, yielding between batches so requests go first: by age,
 * then by count for `automationIds` (or, when not given, every automation over the limit).
 */
export async function pruneAll(core: Core, opts: { batch: number; automationIds?: string[]; stopped?: () => boolean }): Promise<PruneResult> {
  const total = { runs: 0, groupRuns: 0 };
  const add = (r: PruneResult) => {
    total.runs += r.runs;
    total.groupRuns += r.groupRuns;
    return r.runs > 0;
  };
  // Runs that ended without being counted (before roll-ups existed, or a crash in between) are counted first.
  while (!opts.stopped?.() && (await rollUpRuns(core.db, { limit: opts.batch })) === opts.batch) await yieldToRequests();
  while (!opts.stopped?.() && add(await pruneOldBatch(core, opts.batch))) await yieldToRequests();
  const max = core.config.retention.max_runs_per_automation;
  if (max <= 0) return total;
  // Only those over the limit are pruned one by one: one statement finds them among a batch's automations.
  for (const a of await store.automationsOverLimit(core.db, max, opts.automationIds)) {
    while (!opts.stopped?.() && add(await pruneExtraBatch(core, a, opts.batch))) await yieldToRequests();
  }
  return total;
}

/** How long a schedule's fire history (schedule_fires) is kept when runs are kept without an age limit. */
const FIRE_HISTORY_DAYS_WITHOUT_RUN_LIMIT = 90;

/**
 * Removes the fires (due times taken: started, skipped or failed) of schedules older than `retention.run_days` (90
 * days when runs have no age limit), keeping each schedule's latest, which is its `last_fire`. A schedule due every
 * 10 s keeps 8,640 of them a day: without this they only grew. Answers how many went.
 */
export async function pruneScheduleFires(core: Core, now = Date.now()): Promise<number> {
  const days = core.config.retention.run_days > 0 ? core.config.retention.run_days : FIRE_HISTORY_DAYS_WITHOUT_RUN_LIMIT;
  return store.deleteScheduleFiresBefore(core.db, new Date(now - days * DAY_MS).toISOString());
}
