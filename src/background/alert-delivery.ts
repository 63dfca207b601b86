// The alert delivery engine: sends what the outbox holds as soon as it is written (woken by the core), and polls
// for retries that come due. Each delivery is leased before it is sent, so two nodes never send it at once.
import type { OpenedCore } from "../core";
import { recordAttempt, soonestDelivery, takeDueDeliveries } from "../core/alerts/outbox";
import type { Engine } from "../extensions";
import { log } from "../logging";
import { sendDelivery } from "./alert-senders";

const POLL_MS = 1000;
const BATCH = 20;

export class AlertDeliveryEngine implements Engine {
  readonly name = "alerts";
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pumping: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  private failures = 0;

  constructor(private readonly core: OpenedCore) {}

  private readonly wake = () => void this.pump();

  start(): void {
    this.core.events.on("alertsQueued", this.wake);
    void this.pump();
  }

  healthy(): boolean {
    return !this.stopping && this.failures < 3;
  }

  private schedule(ms: number): void {
    if (this.stopping) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.wake, Math.max(0, Math.min(POLL_MS, ms)));
  }

  private pump(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.pumping) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      try {
        do {
          this.again = false;
          for (;;) {
            const taken = await takeDueDeliveries(this.core, new Date(), BATCH);
            if (taken.length === 0) break;
            await Promise.all(
              taken.map(async (d) => {
                const result = await sendDelivery(this.core.config, d);
                await recordAttempt(this.core, d, result, new Date());
                if (!result.ok) log.warn("an alert delivery failed", { delivery: d.id, channel: d.channel.id, attempt: d.attempts + 1, error: result.error });
              }),
            );
            if (this.stopping) return;
          }
        } while (this.again && !this.stopping);
        const next = await soonestDelivery(this.core);
        this.failures = 0;
        this.schedule(next === null ? POLL_MS : Date.parse(next) - Date.now());
      } catch (e) {
        this.failures++;
        log.error("alert delivery failed to read the outbox", { error: (e as Error).message });
        this.schedule(POLL_MS);
      } finally {
        this.pumping = null;
      }
    })();
    return this.pumping;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.core.events.off("alertsQueued", this.wake);
    if (this.timer) clearTimeout(this.timer);
    await this.pumping;
  }
}
