// The run engine: a bounded pool that claims queued runs, executes them with timeout, cancel and retries,
// and hands the outcomes to the batch writer.
import type { OpenedCore } from "../core";
import { artifactDir } from "../core/runs/artifacts";
import {
  claimQueuedRuns,
  recordRunProgress,
  recoverInterruptedRuns,
  type ClaimedRun,
  type FinalRunStatus,
  type RunAttempt,
  type RunOutcome,
  type RunSummaryCounts,
} from "../core/runs/queue";
import { CookieJar } from "tough-cookie";
import type { Engine } from "../extensions";
import { log } from "../logging";
import { SharedBrowser } from "./chromium";
import { OutcomeWriter } from "./outcome-writer";
import { RunAborted, runAttempt, validateSteps } from "./run-attempt";
import { maskDeep, secretMasker, type Masker } from "./secret-masking";
import type { StepContext, StepResult } from "./step-result";

interface ActiveRun {
  run: ClaimedRun;
  controller: AbortController;
  steps: StepResult[];
  attempts: RunAttempt[];
  masker: Masker | null;
  /** Steps changed since the last progress write. */
  dirty: boolean;
}

const POLL_MS = 1000;
/** Runs shorter than this never write progress: their one final write is enough. */
const PROGRESS_AFTER_MS = 1000;
const CANCEL_MEMORY_MS = 60_000;

function summarize(steps: StepResult[]): RunSummaryCounts {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const s of steps) {
    if (s.status === "passed") passed++;
    else if (s.status === "skipped") skipped++;
    else failed++;
  }
  return { steps: steps.length, passed, failed, skipped };
}

/** The first failed step of a failed run, for its log line: "step 2 (get item): status: expected 200, got 500". */
function firstFailure(steps: StepResult[], mask: ((s: string) => string) | null): string | undefined {
  const f = steps.find((x) => x.status === "failed");
  if (!f) return undefined;
  const text = `step ${f.index + 1}${f.name ? ` (${f.name})` : ""}: ${f.message ?? "failed"}`;
  return mask ? mask(text) : text;
}

/** What went wrong in one attempt, kept with it: a retried attempt's steps are replaced by the next attempt's. */
function attemptMessage(result: { status: string; error: string | null; steps: StepResult[] }, mask: Masker | null): string | null {
  if (result.status === "passed") return null;
  const text = result.error ?? firstFailure(result.steps, null) ?? result.status;
  return mask ? mask(text) : text;
}

export class RunEngine implements Engine {
  readonly name = "runs";
  private readonly active = new Map<string, ActiveRun>();
  /** Cancellations that may arrive while a claim is in flight, before the run is in `active`. */
  private readonly recentlyCancelled = new Map<string, number>();
  private readonly writer: OutcomeWriter;
  private readonly browser: SharedBrowser;
  private stopping = false;
  /** The claim in progress, if any: stop waits for it so no run is claimed behind its back. */
  private pumping: Promise<void> | null = null;
  /** When the claim in progress began: a claim that never returns stops all work as surely as one that fails. */
  private pumpSince = 0;
  private pumpAgain = false;
  private poller: ReturnType<typeof setInterval> | null = null;
  private idle: (() => void) | null = null;
  private started = false;
  /** Claims failing in a row: the queue cannot be read, so queued runs would wait forever. */
  private claimFailures = 0;

  constructor(private readonly core: OpenedCore) {
    this.writer = new OutcomeWriter(core);
    this.browser = new SharedBrowser(core.config.runner.browser_path);
  }

  private readonly onQueued = () => void this.pump();
  private readonly onCancelled = (runId: string) => {
    this.recentlyCancelled.set(runId, Date.now());
    this.active.get(runId)?.controller.abort(new RunAborted("cancelled"));
  };

  async start(): Promise<void> {
    const recovered = await recoverInterruptedRuns(this.core);
    if (recovered.length > 0) log.warn("runs left running by a previous process were finished as error", { runs: recovered.length });
    this.core.events.on("runQueued", this.onQueued);
    this.core.events.on("runCancelled", this.onCancelled);
    this.started = true;
    this.poller = setInterval(() => {
      void this.pump();
      void this.saveProgress();
      const old = Date.now() - CANCEL_MEMORY_MS;
      for (const [id, at] of this.recentlyCancelled) if (at < old) this.recentlyCancelled.delete(id);
    }, POLL_MS);
    void this.pump();
  }

  healthy(): boolean {
    return this.started && !this.stopping && this.claimFailures < 3 && !this.claimStuck();
  }

  /** Longer than three polls plus two busy-timeout waits: more than lock contention can explain. */
  private claimStuck(): boolean {
    return this.pumping !== null && performance.now() - this.pumpSince > 3 * POLL_MS + 2 * this.core.config.busy_timeout_ms;
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.poller) clearInterval(this.poller);
    this.core.events.off("runQueued", this.onQueued);
    this.core.events.off("runCancelled", this.onCancelled);
    await this.pumping;
    if (this.active.size > 0) {
      log.info("waiting for running runs to finish", { runs: this.active.size, grace_ms: graceMs });
      await this.waitIdle(graceMs);
      for (const a of this.active.values()) a.controller.abort(new RunAborted("shutdown"));
      await this.waitIdle(5_000);
    }
    await this.writer.close();
    await this.browser.close();
  }

  private waitIdle(ms: number): Promise<void> {
    if (this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.idle = done;
    });
  }

  /** Runs finishing in the same turn share one claim instead of claiming one run each. */
  private pumpScheduled = false;
  private pumpSoon(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      void this.pump();
    });
  }

  /** Fills free pool slots with queued runs; calls that arrive while a claim is running make it go round again. */
  private pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return this.pumping;
    }
    this.pumpSince = performance.now();
    this.pumping = this.fillSlots().finally(() => {
      this.pumping = null;
      // A call that arrived after the last claim of the loop still gets its turn.
      if (this.pumpAgain && !this.stopping) {
        this.pumpAgain = false;
        this.pumpSoon();
      }
    });
    return this.pumping;
  }

  private async fillSlots(): Promise<void> {
    try {
      while (!this.stopping) {
        this.pumpAgain = false;
        const free = this.core.config.runner.concurrency - this.active.size;
        if (free <= 0) break;
        const runs = await claimQueuedRuns(this.core, free);
        this.claimFailures = 0;
        for (const run of runs) this.launch(run);
        if (runs.length === 0 && !this.pumpAgain) break;
      }
    } catch (e) {
      this.claimFailures++;
      log.error("could not claim queued runs", { error: (e as Error).message });
    }
  }

  private launch(run: ClaimedRun): void {
    const secrets = run.environment?.secrets ?? {};
    const active: ActiveRun = { run, controller: new AbortController(), steps: [], attempts: [], masker: secretMasker(secrets), dirty: false };
    this.active.set(run.id, active);
    if (this.recentlyCancelled.has(run.id)) active.controller.abort(new RunAborted("cancelled"));
    this.execute(active)
      .catch((e) => {
        // A bug must not leave the run `running` forever: it ends as error, and the log names it (secrets masked).
        const message = active.masker ? active.masker(String((e as Error).message)) : String((e as Error).message);
        log.error("run failed inside the engine", { run_id: run.id, error: message });
        return this.outcome(active, "error", `the run could not be executed (internal error: ${message})`, active.steps, []);
      })
      .then((outcome) => {
        this.writer.add(outcome);
        // The outcome's error is masked already: the log never holds a secret the results would hide.
        log.info("run finished", {
          run_id: outcome.id,
          automation_id: outcome.automationId,
          status: outcome.status,
          duration_ms: outcome.durationMs,
          ...(outcome.error !== null ? { error: outcome.error } : {}),
          ...(outcome.failure ? { failure: outcome.failure } : {}),
        });
      })
      .finally(() => {
        this.active.delete(run.id);
        if (this.active.size === 0) this.idle?.();
        if (!this.stopping) this.pumpSoon();
      });
  }

  private async execute(active: ActiveRun): Promise<RunOutcome> {
    const { run, controller } = active;
    const cfg = this.core.config.runner;
    const outcome = (status: FinalRunStatus, error: string | null, steps: StepResult[], artifacts: string[]) =>
      this.outcome(active, status, error, steps, artifacts);
    const spec = run.spec;
    if (!spec) return outcome("error", "the run's snapshot of the automation is unreadable: run the automation again", [], []);
    const checked = validateSteps(spec, run.specText);
    if ("problem" in checked) return outcome("error", checked.problem, [], []);
    if (run.environmentId && !run.environment) {
      return outcome("error", 'the run\'s environment no longer exists: run again with an existing environment ("environment": name or id)', [], []);
    }
    const unreadable = run.environment?.unreadableSecrets ?? [];
    if (unreadable.length > 0) {
      return outcome(
        "error",
        `the secrets ${unreadable.join(", ")} of the environment "${run.environment?.name}" cannot be decrypted with this server's secrets key: set them again (update_environment)`,
        [],
        [],
      );
    }
    const allowedHosts = run.environment?.secretHosts ?? null;
    const secretHosts = allowedHosts && active.masker ? { environment: run.environment?.name ?? "", allowed: allowedHosts, find: active.masker.find } : null;
    const timeoutMs = spec.timeout_ms > 0 ? spec.timeout_ms : cfg.default_timeout_ms;
    const deadline = performance.now() + timeoutMs;
    const timer = setTimeout(() => controller.abort(new RunAborted("timeout")), timeoutMs);
    const variables = run.environment?.variables ?? {};
    const secrets = run.environment?.secrets ?? {};
    const maxAttempts = Math.max(1, (spec.retries ?? 0) + 1);
    const artifacts: string[] = [];
    try {
      for (let attempt = 1; ; attempt++) {
        const vars = new Map<string, unknown>(Object.entries(variables));
        for (const [k, v] of Object.entries(secrets)) vars.set(k, v);
        const ctx: StepContext = {
          runId: run.id,
          vars,
          baseUrl: (vars.get("BASE_URL") as string | undefined) ?? null,
          signal: controller.signal,
          remainingMs: () => deadline - performance.now(),
          excerptBytes: cfg.response_excerpt_bytes,
          maxResponseBytes: cfg.max_response_bytes,
          artifactDir: artifactDir(this.core.config.data_dir, run.id),
          artifactPrefix: attempt > 1 ? `attempt${attempt}-` : "",
          cookies: new CookieJar(),
          mask: active.masker,
          secretHosts,
        };
        const t0 = performance.now();
        try {
          const result = await runAttempt(checked.steps, ctx, {
            browser: this.browser,
            onStep: (steps) => {
              active.steps = steps;
              active.dirty = true;
            },
          });
          artifacts.push(...result.artifacts);
          active.attempts.push({
            attempt,
            status: result.status,
            error: result.error,
            message: attemptMessage(result, active.masker),
            duration_ms: Math.round(performance.now() - t0),
          });
          if (result.status === "passed" || attempt >= maxAttempts) return outcome(result.status, result.error, result.steps, artifacts);
          active.steps = [];
          active.dirty = true;
        } catch (e) {
          if (!(e instanceof RunAborted)) throw e;
          const steps = e.partial?.steps ?? active.steps;
          artifacts.push(...(e.partial?.artifacts ?? []));
          const [status, error] = this.abortedStatus(e.reason, timeoutMs);
          active.attempts.push({ attempt, status, error, message: error, duration_ms: Math.round(performance.now() - t0) });
          return outcome(status, error, steps, artifacts);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** The run's final record, with secrets masked in everything it says. */
  private outcome(active: ActiveRun, status: FinalRunStatus, error: string | null, steps: StepResult[], artifacts: string[]): RunOutcome {
    const { run } = active;
    const finished = Date.now();
    const mask = active.masker;
    return {
      id: run.id,
      claim: run.claim,
      automationId: run.automationId,
      status,
      startedAt: run.startedAt,
      finishedAt: new Date(finished).toISOString(),
      durationMs: Math.max(0, finished - Date.parse(run.startedAt)),
      error: error !== null && mask ? mask(error) : error,
      failure: status === "failed" ? firstFailure(steps, mask) : undefined,
      summary: summarize(steps),
      resultsJson: JSON.stringify({ steps: mask ? maskDeep(steps, mask) : steps, artifacts }),
      attempts: mask ? maskDeep(active.attempts, mask) : active.attempts,
    };
  }

  private abortedStatus(reason: RunAborted["reason"], timeoutMs: number): [FinalRunStatus, string] {
    if (reason === "timeout")
      return ["timed_out", `the run did not finish within its timeout of ${timeoutMs} ms: raise the automation's timeout_ms or make the steps faster`];
    if (reason === "cancelled") return ["cancelled", "cancelled by request"];
    return ["error", "interrupted by server shutdown before the run finished: run it again"];
  }

  /** Long runs show their steps while they run, and a crash keeps what was done. */
  private async saveProgress(): Promise<void> {
    const now = Date.now();
    for (const a of this.active.values()) {
      if (!a.dirty || now - Date.parse(a.run.startedAt) < PROGRESS_AFTER_MS) continue;
      a.dirty = false;
      const steps = a.masker ? maskDeep(a.steps, a.masker) : a.steps;
      try {
        const attempts = a.masker ? maskDeep(a.attempts, a.masker) : a.attempts;
        await recordRunProgress(this.core, a.run, { resultsJson: JSON.stringify({ steps, artifacts: [] }), summary: summarize(a.steps), attempts });
      } catch (e) {
        log.warn("could not record run progress", { run_id: a.run.id, error: (e as Error).message });
      }
    }
  }
}
