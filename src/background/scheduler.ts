// The scheduler engine: fires due schedules. It sleeps until the soonest due time (at most a second, so a
// schedule written by another node is seen within a second), and is woken when a schedule changes here.
import type { OpenedCore } from "../core";
import { fireDueSchedules, soonestDue } from "../core/schedules/operations";
import type { Engine } from "../extensions";
import { log } from "../logging";

const TICK_MS = 1000;

export class SchedulerEngine implements Engine {
  readonly name = "schedules";
  private timer: ReturnType<typeof setTimeout> | null = null;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopping = false;
  private failures = 0;

  constructor(private readonly core: OpenedCore) {}

  private readonly wake = () => void this.tick();

  start(): void {
    this.core.events.on("schedulesChanged", this.wake);
    void this.tick();
  }

  healthy(): boolean {
    return !this.stopping && this.failures < 3;
  }

  private tick(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    if (this.ticking) {
      this.again = true;
      return this.ticking;
    }
    this.ticking = (async () => {
      let wait = TICK_MS;
      try {
        do {
          this.again = false;
          const fired = await fireDueSchedules(this.core, new Date());
          for (const f of fired) {
            if (f.error) log.warn("a schedule could not start its runs", { schedule: f.scheduleId, due_at: f.dueAt, error: f.error });
            else if (f.skipped) log.info("a schedule's due time was skipped", { schedule: f.scheduleId, due_at: f.dueAt, reason: f.skipped });
          }
        } while (this.again && !this.stopping);
        const next = await soonestDue(this.core);
        if (next !== null) wait = Math.min(TICK_MS, Math.max(0, Date.parse(next) - Date.now()));
        this.failures = 0;
      } catch (e) {
        this.failures++;
        log.error("the scheduler failed to fire due schedules", { error: (e as Error).message });
      } finally {
        this.ticking = null;
        if (!this.stopping) {
          if (this.timer) clearTimeout(this.timer);
          this.timer = setTimeout(this.wake, wait);
        }
      }
    })();
    return this.ticking;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.core.events.off("schedulesChanged", this.wake);
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
  }
}
