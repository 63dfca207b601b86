// The generation engine inside `svc serve`: takes queued generations from the database and runs them, stops a
// job when it is cancelled, and at start fails the jobs a dead process left `running`.
import type { OpenedCore } from "../core";
import { claimNextGeneration, generationStillRunning, recoverInterruptedGenerations } from "../core/generations/queue";
import { type Engine, serverExtensions } from "../extensions";
import { log } from "../logging";
import { runGenerationJob } from "./job";

const MAX_PARALLEL_JOBS = 2;
/** Also looks for work on a timer: another process (or a missed event) may have queued a job. */
const POLL_MS = 2_000;
/** A generation is cheap to start again, so stopping waits for in-flight jobs only briefly before aborting them. */
const MAX_STOP_WAIT_MS = 2_000;

export function createGenerationEngine(core: OpenedCore): Engine {
  const running = new Map<string, { controller: AbortController; done: Promise<void> }>();
  let stopped = false;
  let alive = true;
  let timer: ReturnType<typeof setInterval> | null = null;
  let filling = false;
  /** Set when work is signalled while a fill is under way, so that fill looks once more before it ends. */
  let again = false;

  async function fill(): Promise<void> {
    if (stopped) return;
    if (filling) {
      again = true;
      return;
    }
    filling = true;
    try {
      again = true;
      while (again && !stopped) {
        again = false;
        while (!stopped && running.size < MAX_PARALLEL_JOBS) {
          const job = await claimNextGeneration(core);
          alive = true;
          if (!job) break;
          const controller = new AbortController();
          const done = runGenerationJob(core, job, controller.signal)
            .catch((e) => log.error("generation job crashed", { generation: job.id, error: (e as Error).message }))
            .finally(() => {
              running.delete(job.id);
              void fill();
            });
          running.set(job.id, { controller, done });
        }
      }
    } catch (e) {
      alive = false;
      log.error("generation engine could not take work", { error: (e as Error).message });
    } finally {
      filling = false;
    }
  }

  const onQueued = () => void fill();
  const onCancelled = (id: string) => running.get(id)?.controller.abort(new Error("cancelled"));
  /** A cancel made by another process reaches this one only through the database. */
  async function checkCancelled(): Promise<void> {
    for (const [id, job] of running) if (!(await generationStillRunning(core, id))) job.controller.abort(new Error("cancelled"));
  }

  return {
    name: "generation",
    async start() {
      const recovered = await recoverInterruptedGenerations(core);
      if (recovered > 0) log.warn("generations interrupted by a restart were marked failed", { count: recovered });
      core.events.on("generationQueued", onQueued);
      core.events.on("generationCancelled", onCancelled);
      timer = setInterval(() => {
        void checkCancelled().catch(() => undefined);
        void fill();
      }, POLL_MS);
      void fill();
    },
    async stop(graceMs) {
      stopped = true;
      if (timer) clearInterval(timer);
      core.events.off("generationQueued", onQueued);
      core.events.off("generationCancelled", onCancelled);
      const all = Promise.all([...running.values()].map((j) => j.done));
      const grace = new Promise<void>((r) => setTimeout(r, Math.min(graceMs, MAX_STOP_WAIT_MS)));
      await Promise.race([all, grace]);
      for (const j of running.values()) j.controller.abort(new Error("server stopping"));
      await all;
    },
    healthy: () => alive,
  };
}

serverExtensions.engines.push(createGenerationEngine);
