// Ends the leases of runners that stopped heart-beating (see sweepExpiredLeases), and on PostgreSQL those of nodes
// that stopped renewing theirs (sweepLostNodeRuns): inside every `svc serve`, also when the server executes no runs
// itself (runner.local = false).
import type { OpenedCore } from "../core";
import { sweepExpiredLeases } from "../core/runners/protocol";
import { sweepLostNodeRuns } from "../core/runs/queue";
import type { Engine } from "../extensions";
import { log } from "../logging";

export class LeaseSweeper implements Engine {
  readonly name = "runner-leases";
  private timer: ReturnType<typeof setInterval> | null = null;
  private sweeping = false;
  /**
   * Runners' leases are judged only once this server has been up for a lease: while it was away (a restart, an
   * upgrade) no runner could heart-beat, and a healthy runner's lease lapsed with no fault of its own. Within a
   * lease of the server's return every live runner has heart-beaten again (they retry at least every lease / 3).
   */
  private judgeLeasesFrom = 0;

  constructor(private readonly core: OpenedCore) {}

  start(): void {
    // Often enough that a lost run ends well within a lease of its expiry.
    const every = Math.max(100, Math.min(1000, Math.floor(this.core.config.runner.lease_ms / 4)));
    this.judgeLeasesFrom = Date.now() + this.core.config.runner.lease_ms;
    this.timer = setInterval(() => void this.sweep(), every);
    // While the server stops, its runners cannot heart-beat: their leases are not ended for it.
    this.core.events.once("closing", this.halt);
  }

  private readonly halt = () => {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  };

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      if (Date.now() >= this.judgeLeasesFrom) await sweepExpiredLeases(this.core);
      const lost = await sweepLostNodeRuns(this.core);
      if (lost.length > 0) log.warn("runs of a node that stopped renewing its lease were finished as error", { runs: lost.length });
    } catch (e) {
      log.warn("could not end expired runner leases", { error: (e as Error).message });
    } finally {
      this.sweeping = false;
    }
  }

  async stop(): Promise<void> {
    this.core.events.off("closing", this.halt);
    this.halt();
  }
}
