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

  constructor(private readonly core: OpenedCore) {}

  start(): void {
    // Often enough that a lost run ends well within a lease of its expiry.
    const every = Math.max(100, Math.min(1000, Math.floor(this.core.config.runner.lease_ms / 4)));
    this.timer = setInterval(() => void this.sweep(), every);
  }

  private async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await sweepExpiredLeases(this.core);
      const lost = await sweepLostNodeRuns(this.core);
      if (lost.length > 0) log.warn("runs of a node that stopped renewing its lease were finished as error", { runs: lost.length });
    } catch (e) {
      log.warn("could not end expired runner leases", { error: (e as Error).message });
    } finally {
      this.sweeping = false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
  }
}
