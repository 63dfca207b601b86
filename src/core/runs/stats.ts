// Counts of runs by status for metrics: one grouped query on the runs_status index, cheap enough per scrape.
import type { FastPaths } from "../../db/fast-paths";
import { RunStatus } from "../../manifest/records";

export interface RunStats {
  /** Every status of the manifest, zero when no run has it. */
  byStatus: Record<string, number>;
  /** Runs waiting for a worker. */
  queueDepth: number;
}

/** Reads with a cached statement (metrics are scraped often and need no query builder). */
export function runStatsReader(fast: FastPaths): () => RunStats {
  return () => {
    const byStatus: Record<string, number> = Object.fromEntries(RunStatus.options.map((s) => [s, 0]));
    for (const row of fast.runCountsByStatus()) byStatus[row.status] = row.n;
    return { byStatus, queueDepth: byStatus.queued ?? 0 };
  };
}
