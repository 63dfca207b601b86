// The retention engine inside `svc serve`: prunes runs past `retention.*` in small batches, within seconds after
// runs end (for the automations whose runs ended), within seconds after a run grows past the age limit (a cheap
// indexed check every few seconds), and on an hourly sweep over everything (age and count), schedules' fire history
// included.
import type { OpenedCore } from "../core";
import { anyRunPastAge, pruneAll, pruneScheduleFires } from "../core/history/retention";
import { automationsOfEndedRuns } from "../core/history/operations";
import { type Engine, serverExtensions } from "../extensions";
import { log } from "../logging";

/** Runs removed per batch: each batch is one short transaction, so requests are never held up for long. */
const BATCH = 500;
/** After runs end, their automations are checked this soon (the bound is 10 s). */
const AFTER_END_MS = 2_000;
/** How often the age limit is looked at (one indexed query); a run past it goes within this and one pass. */
const AGE_CHECK_MS = 5_000;
const SWEEP_MS = 3_600_000;
/** After a failed pass (the database busy, say), a whole sweep is tried again this soon rather than in an hour. */
const RETRY_MS = 60_000;

export function createRetentionEngine(core: OpenedCore): Engine {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  let soon: ReturnType<typeof setTimeout> | null = null;
  let hourly: ReturnType<typeof setInterval> | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let ageCheck: ReturnType<typeof setInterval> | null = null;
  /** Passes queued or under way: the age check adds none while another is waiting. */
  let pending = 0;
  const endedRuns = new Set<string>();

  /** Runs one pass after the one under way (passes never overlap). */
  function enqueue(pass: () => Promise<void>): void {
    pending++;
    current = current.then(async () => {
      if (stopped) {
        pending--;
        return;
      }
      try {
        await pass();
      } catch (e) {
        // Pruning is never urgent: the next pass picks up where this one stopped.
        log.error("retention could not prune runs", { error: (e as Error).message });
        if (!stopped && !retry)
          retry = setTimeout(() => {
            retry = null;
            sweep();
          }, RETRY_MS);
      } finally {
        pending--;
      }
    });
  }

  function sweep(): void {
    enqueue(async () => {
      const r = await pruneAll(core, { batch: BATCH, stopped: () => stopped });
      if (r.runs > 0) log.info("retention pruned runs", { runs: r.runs, group_runs: r.groupRuns });
      const fires = stopped ? 0 : await pruneScheduleFires(core);
      if (fires > 0) log.info("retention pruned schedules' fire history", { fires });
    });
  }

  function afterEnd(): void {
    soon = null;
    const ids = [...endedRuns];
    endedRuns.clear();
    enqueue(async () => {
      const automationIds = await automationsOfEndedRuns(core, ids);
      const r = await pruneAll(core, { batch: BATCH, automationIds, stopped: () => stopped });
      if (r.runs > 0) log.info("retention pruned runs", { runs: r.runs, group_runs: r.groupRuns });
    });
  }

  /** The age pass alone (no count limits), when a run has grown past `run_days` since the last look. */
  function checkAge(): void {
    if (pending > 0) return;
    enqueue(async () => {
      if (!(await anyRunPastAge(core))) return;
      const r = await pruneAll(core, { batch: BATCH, automationIds: [], stopped: () => stopped });
      if (r.runs > 0) log.info("retention pruned runs", { runs: r.runs, group_runs: r.groupRuns });
    });
  }

  const onEnded = (ids: string[]) => {
    for (const id of ids) endedRuns.add(id);
    soon ??= setTimeout(afterEnd, AFTER_END_MS);
  };

  return {
    name: "retention",
    start() {
      core.events.on("runsEnded", onEnded);
      sweep();
      hourly = setInterval(sweep, SWEEP_MS);
      ageCheck = setInterval(checkAge, AGE_CHECK_MS);
    },
    async stop() {
      stopped = true;
      core.events.off("runsEnded", onEnded);
      if (soon) clearTimeout(soon);
      if (hourly) clearInterval(hourly);
      if (ageCheck) clearInterval(ageCheck);
      if (retry) clearTimeout(retry);
      await current;
    },
  };
}

serverExtensions.engines.push(createRetentionEngine);
