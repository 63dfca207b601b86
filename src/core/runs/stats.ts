// Counts of runs by status for metrics: one grouped query on the queue index (runs_queue begins with the status), cheap enough per scrape.
import { RunStatus } from "../../manifest/records";
import type { RunQueueStore } from "../storage";

export interface RunStats {
  /** Every status of the manifest, zero when no run has it. */
  byStatus: Record<string, number>;
  /** Runs waiting for a worker. */
  queueDepth: number;
}

/** Reads with the store's hot statement (metrics are scraped often and need no query builder). */
export function runStatsReader(queue: RunQueueStore): () => Promise<RunStats> {
  return async () => {
    const byStatus: Record<string, number> = Object.fromEntries(RunStatus.options.map((s) => [s, 0]));
    for (const row of await queue.runCountsByStatus()) byStatus[row.status] = row.n;
    return { byStatus, queueDepth: byStatus.queued ?? 0 };
  };
}
