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

/**
 * One batch of at most about `batch` runs past a limit: by age first, then by count for `automationIds` (or, when
 * not given, every automation over the limit). Answers what it removed; zero runs means nothing is left to do.
 */
export async function pruneBatch(core: Core, batch: number, automationIds?: string[], now = Date.now()): Promise<PruneResult> {
  const { run_days, max_runs_per_automation: max } = core.config.retention;
  // Runs that ended without being counted (before roll-ups existed, or a crash in between) are counted first.
  await rollUpRuns(core.db, { limit: batch });
  if (run_days > 0) {
    const old = await store.runsCreatedBefore(core.db, new Date(now - run_days * DAY_MS).toISOString(), batch);
    if (old.length > 0) return removeRuns(core, old);
  }
  if (max > 0) {
    for (const a of automationIds ?? (await store.automationsOverLimit(core.db, max))) {
      const extra = await store.runsBeyond(core.db, a, max, batch);
      if (extra.length > 0) return removeRuns(core, extra);
    }
  }
  return { runs: 0, groupRuns: 0 };
}

/** Prunes batch after batch until nothing is past a limit, yielding between batches so requests go first. */
export async function pruneAll(core: Core, opts: { batch: number; automationIds?: string[]; stopped?: () => boolean }): Promise<PruneResult> {
  const total = { runs: 0, groupRuns: 0 };
  while (!opts.stopped?.()) {
    const r = await pruneBatch(core, opts.batch, opts.automationIds);
    total.runs += r.runs;
    total.groupRuns += r.groupRuns;
    if (r.runs === 0) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}
