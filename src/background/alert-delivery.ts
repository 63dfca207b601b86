// The alert delivery engine: sends what the outbox holds as soon as it is written (woken by the core), and polls
// for retries that come due. Each delivery is leased before it is sent, so two nodes never send it at once.
// Deliveries are sent side by side within bounds, so a receiver that never answers holds up its own channel only.
import type { OpenedCore } from "../core";
import { sealPlainSlackUrls } from "../core/alerts/channel-url";
import { type DueDelivery, recordAttempt, soonestDelivery, takeDueDeliveries } from "../core/alerts/outbox";
import type { Engine } from "../extensions";
import { log } from "../logging";
import { sendDelivery } from "./alert-senders";

const POLL_MS = 1000;
/** Attempts in flight at once on this node, over every channel of every workspace. */
const MAX_IN_FLIGHT = 8;
/** Attempts in flight at once for one channel: one, so a channel receives its deliveries in the order they came due,
 * and a channel whose receiver hangs holds one slot, not all of them. */
const PER_CHANNEL = 1;

export class AlertDeliveryEngine implements Engine {
  readonly name = "alerts";
  private timer: ReturnType<typeof setTimeout> | null = null;
  private pumping: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  private failures = 0;
  /** The attempts in flight, by delivery id: each ends with its outcome recorded (or its lease left to run out). */
  private readonly sending = new Map<string, Promise<void>>();
  /** How many of `sending` each channel has, by channel id. */
  private readonly channelLoad = new Map<string, number>();

  constructor(private readonly core: OpenedCore) {}

  private readonly wake = () => void this.pump();

  async start(): Promise<void> {
    // Slack URLs stored before they were sealed are sealed before the first delivery: here, where every `svc serve`
    // passes with the secrets key open (rows written since are sealed as they are written). A failure stops
    // nothing: such a URL still delivers as it is, and is sealed when its channel is next written or at the next start.
    await sealPlainSlackUrls(this.core).catch((e: unknown) =>
      log.warn("could not encrypt the Slack webhook URLs stored in plain text", { error: (e as Error).message }),
    );
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

  private fullChannels(): string[] {
    return [...this.channelLoad].filter(([, n]) => n >= PER_CHANNEL).map(([id]) => id);
  }

  /** Takes due deliveries into the free slots and starts them; returns without waiting for their attempts. */
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
          while (!this.stopping && this.sending.size < MAX_IN_FLIGHT) {
            const taken = await takeDueDeliveries(this.core, new Date(), {
              limit: MAX_IN_FLIGHT - this.sending.size,
              perChannel: PER_CHANNEL,
              inFlight: this.channelLoad,
            });
            if (taken.length === 0) break;
            // Leased now: started even when stop() came meanwhile, and stop() waits for them.
            for (const d of taken) this.send(d);
          }
        } while (this.again && !this.stopping);
        // Deliveries of channels with an attempt in flight wait for its end (which wakes the engine), not for a timer.
        const next = await soonestDelivery(this.core, this.fullChannels());
        this.failures = 0;
        const wait = next === null ? POLL_MS : Date.parse(next) - Date.now();
        this.schedule(wait <= 0 && this.sending.size >= MAX_IN_FLIGHT ? POLL_MS : wait);
      } catch (e) {
        this.failures++;
        log.error("alert delivery failed to read the outbox", { error: (e as Error).message });
        this.schedule(POLL_MS);
      } finally {
        this.pumping = null;
        // Woken while reading the soonest time (an attempt ended): take into the freed slot now, not at the timer.
        if (this.again) void this.pump();
      }
    })();
    return this.pumping;
  }

  private send(d: DueDelivery): void {
    this.channelLoad.set(d.channel.id, (this.channelLoad.get(d.channel.id) ?? 0) + 1);
    const attempt = this.attempt(d).finally(() => {
      this.sending.delete(d.id);
      const left = (this.channelLoad.get(d.channel.id) ?? 1) - 1;
      if (left > 0) this.channelLoad.set(d.channel.id, left);
      else this.channelLoad.delete(d.channel.id);
      // A slot is free: the next due delivery (perhaps this channel's) goes now.
      this.wake();
    });
    this.sending.set(d.id, attempt);
  }

  private async attempt(d: DueDelivery): Promise<void> {
    try {
      const result = await sendDelivery(this.core.config, d);
      await recordAttempt(this.core, d, result, new Date());
      if (!result.ok) log.warn("an alert delivery failed", { delivery: d.id, channel: d.channel.id, attempt: d.attempts + 1, error: result.error });
    } catch (e) {
      // Still pending and leased: it is taken again, as this attempt, once the lease runs out.
      log.error("an alert delivery's attempt could not be recorded", { delivery: d.id, channel: d.channel.id, error: (e as Error).message });
    }
  }

  /** Takes no more deliveries; the attempts in flight end (each within alerts.timeout_ms) and are recorded first. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.core.events.off("alertsQueued", this.wake);
    if (this.timer) clearTimeout(this.timer);
    await this.pumping;
    while (this.sending.size > 0) await Promise.all(this.sending.values());
  }
}
