// Buffers finished runs for a few milliseconds and writes them in one transaction: one commit for many runs.
import type { Core } from "../core/context";
import { finishRuns, type RunOutcome } from "../core/runs/queue";
import { log } from "../logging";

/** How long an outcome waits for others: short when runs finish one by one, longer when they pour in (the last
 * write took many), where one commit for more runs matters more than a few milliseconds. */
const BATCH_DELAY_MS = 5;
const BUSY_BATCH_DELAY_MS = 20;
const BUSY_BATCH = 16;
const BATCH_MAX = 250;
const RETRY_DELAY_MS = 500;

export class OutcomeWriter {
  private pending: RunOutcome[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** When the armed timer fires (performance.now()). */
  private due = 0;
  private closed = false;
  /** How many runs the last write took. */
  private lastBatch = 0;

  constructor(private readonly core: Core) {}

  add(outcome: RunOutcome): void {
    this.pending.push(outcome);
    this.schedule(this.pending.length >= BATCH_MAX ? 0 : this.lastBatch >= BUSY_BATCH ? BUSY_BATCH_DELAY_MS : BATCH_DELAY_MS);
  }

  /** No other outcome will join the batch soon (nothing else is executing or queued): it is written at once. */
  flushNow(): void {
    if (this.pending.length > 0) this.schedule(0);
  }

  /**
   * Arms the write for `delayMs` from now, unless one is due sooner. Never later: re-arming on every outcome kept
   * a write "at once" (a full batch) from ever firing while outcomes poured in faster than a timer's millisecond,
   * and a whole group run was written after its last outcome.
   */
  private schedule(delayMs: number): void {
    if (this.closed) return;
    const due = performance.now() + delayMs;
    if (this.timer) {
      if (this.due <= due) return;
      clearTimeout(this.timer);
    }
    this.due = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, delayMs);
  }

  /** Writes everything buffered; resolves when it is in the database (or has failed and is queued again). */
  flush(): Promise<void> {
    this.chain = this.chain.then(async () => {
      const batch = this.pending.splice(0);
      this.lastBatch = batch.length;
      if (batch.length === 0) return;
      try {
        await finishRuns(this.core, batch);
      } catch (e) {
        // The rows stay `running` under our claim, so writing them later is still correct.
        log.error("could not record finished runs; retrying", { runs: batch.length, error: (e as Error).message });
        this.pending.unshift(...batch);
        this.schedule(RETRY_DELAY_MS);
      }
    });
    return this.chain;
  }

  /** The last flush before the database closes; what cannot be written stays `running` for restart recovery. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.length > 0) log.error("finished runs could not be recorded before shutdown", { runs: this.pending.length });
  }

  get size(): number {
    return this.pending.length;
  }
}
