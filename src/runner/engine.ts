// The run engine: a bounded pool that claims queued runs, has them executed (execute-run.ts: timeout, cancel,
// retries) and hands the outcomes to the batch writer.
import { join } from "node:path";
import type { OpenedCore } from "../core";
import { saveRunArtifact } from "../core/runs/artifacts";
import {
  type ClaimedRun,
  claimQueuedRuns,
  type RunOutcome,
  recordRunProgress,
  recoverInterruptedRuns,
  releaseClaimedRuns,
  renewNodeLeases,
  runsStoppedElsewhere,
} from "../core/runs/queue";
import type { Engine } from "../extensions";
import { log } from "../logging";
import { secretsKeyPath } from "../security/secret-box";
import type { JobProgress, JobResult } from "./execute-run";
import type { RunExecutor } from "./executor";
import { WorkerPoolExecutor, type WorkerHealth } from "./worker-pool";
import { OutcomeWriter } from "./outcome-writer";
import { RunAborted } from "./run-attempt";

interface ActiveRun {
  run: ClaimedRun;
  controller: AbortController;
  /** The steps reached so far (masked), for progress writes. */
  progress: JobProgress | null;
  /** Steps changed since the last progress write. */
  dirty: boolean;
}

const POLL_MS = 1000;
/**
 * How often, while runs execute, the engine asks whether the database changed elsewhere (another node's commit on
 * PostgreSQL, another process's on SQLite): a cancel made there reaches this engine only through the database.
 */
const ELSEWHERE_CHECK_MS = 250;
/** Runs shorter than this never write progress: their one final write is enough. */
const PROGRESS_AFTER_MS = 1000;
const CANCEL_MEMORY_MS = 60_000;
/** How long a freed slot may wait for others before it is filled (see pumpSoon). */
const CLAIM_COALESCE_MS = 5;
/**
 * While runs take less than this (launch to outcome, smoothed), a claim also takes runs ahead, started as slots
 * free: one statement and one commit for many runs instead of one per freed slot, and no slot waits for the
 * database. A run queued meanwhile on this server (another workspace's) sends them back to the queue, so the turns
 * hold; one queued on another node waits behind them at most their AHEAD_FOR_MS.
 */
const AHEAD_WHILE_SHORTER_MS = 50;
/**
 * How much of the slots' work a claim takes ahead: runs for about this long at the smoothed run time, at least one
 * per slot and at most AHEAD_MAX (or a slot count, if more). At the default four slots, with one run per slot ahead,
 * claims were about a quarter of the server's busy time: their fixed part spread over a few runs each.
 */
const AHEAD_FOR_MS = 10;
const AHEAD_MAX = 64;

/** How many runs a claim takes beyond the free slots, for `slots` slots and runs of `runMs` (smoothed). */
export function aheadOf(slots: number, runMs: number): number {
  if (!(runMs < AHEAD_WHILE_SHORTER_MS)) return 0;
  return Math.max(slots, Math.min(AHEAD_MAX, Math.ceil((slots * AHEAD_FOR_MS) / Math.max(runMs, 0.1))));
}

export class RunEngine implements Engine {
  readonly name = "runs";
  private readonly active = new Map<string, ActiveRun>();
  /** Cancellations that may arrive while a claim is in flight, before the run is in `active`. */
  private readonly recentlyCancelled = new Map<string, number>();
  private readonly writer: OutcomeWriter;
  private readonly executor: RunExecutor & { health?(): WorkerHealth };
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
  /** Runs claimed ahead, started as slots free (see AHEAD_WHILE_SHORTER_MS). */
  private ahead: ClaimedRun[] = [];
  /** How long runs take from launch to outcome, smoothed; runs are claimed ahead only while it is short. */
  private runMs = Number.POSITIVE_INFINITY;

  constructor(private readonly core: OpenedCore) {
    this.writer = new OutcomeWriter(core);
    const dataDir = core.config.data_dir;
    this.executor = new WorkerPoolExecutor({
      // More workers than run slots would only sit idle.
      workers: Math.min(core.config.runner.workers, core.config.runner.concurrency),
      browserPath: core.config.runner.browser_path,
      logLevel: core.config.log_level,
      dataDir,
      // The secrets key may live outside the data directory (secrets.key_file): hidden from workers as well.
      hiddenPaths: [secretsKeyPath(dataDir, core.config.secrets.key_file)],
      // The database file (src/db names it): workers report whether they could open it.
      probePath: join(dataDir, "svc.sqlite"),
    });
  }

  private readonly onQueued = () => {
    // A run queued while runs wait ahead may be another workspace's: they go back, and the next claim takes turns.
    if (this.ahead.length > 0) void this.releaseAhead();
    void this.pump();
  };

  private async releaseAhead(): Promise<void> {
    const runs = this.ahead;
    this.ahead = [];
    try {
      await releaseClaimedRuns(this.core, runs);
    } catch (e) {
      // Still ours under the claim: started after all.
      log.warn("could not put runs claimed ahead back in the queue; they run now", { runs: runs.length, error: (e as Error).message });
      this.ahead.push(...runs);
      this.pumpSoon();
    }
  }
  private readonly onCancelled = (runId: string) => {
    this.recentlyCancelled.set(runId, Date.now());
    this.active.get(runId)?.controller.abort(new RunAborted("cancelled"));
  };

  async start(): Promise<void> {
    const recovered = await recoverInterruptedRuns(this.core);
    if (recovered.length > 0) log.warn("runs left running by a previous process were finished as error", { runs: recovered.length });
    // runner.local = false: this server only queues and records; runners (svc runner) execute.
    if (!this.core.config.runner.local) {
      this.started = true;
      return;
    }
    this.core.events.on("runQueued", this.onQueued);
    this.core.events.on("runCancelled", this.onCancelled);
    this.started = true;
    this.poller = setInterval(() => {
      void this.pump();
      void this.saveProgress();
      const old = Date.now() - CANCEL_MEMORY_MS;
      for (const [id, at] of this.recentlyCancelled) if (at < old) this.recentlyCancelled.delete(id);
    }, POLL_MS);
    // On PostgreSQL the runs this node executes are held under a lease it renews (several nodes share the queue).
    this.leaseTimer = setInterval(() => void this.renewLeases(), Math.max(100, Math.floor(this.core.config.runner.lease_ms / 3)));
    this.elsewhereTimer = setInterval(() => void this.checkStoppedElsewhere(), ELSEWHERE_CHECK_MS);
    void this.pump();
  }

  private elsewhereTimer: ReturnType<typeof setInterval> | null = null;
  /** The external change version last looked at, and whether a look is in flight. */
  private elsewhereSeen = -1;
  private elsewhereChecking = false;

  /**
   * Stops the runs cancelled (or ended, or claimed again) elsewhere — on another node, or by another process — which
   * tell this engine nothing but through the database: looked at only when the database changed there, so a quiet
   * cluster costs nothing. Runs waiting ahead are dropped the same way.
   */
  private async checkStoppedElsewhere(): Promise<void> {
    if (this.elsewhereChecking || this.stopping || (this.active.size === 0 && this.ahead.length === 0)) return;
    this.core.changes.refreshExternal();
    const version = this.core.changes.externalVersion();
    if (version === this.elsewhereSeen) return;
    this.elsewhereChecking = true;
    try {
      const runs = [...[...this.active.values()].map((a) => a.run), ...this.ahead];
      const { cancelled, takenBack } = await runsStoppedElsewhere(this.core, runs);
      // Seen only once looked at: a change while the look ran is looked at next time.
      this.elsewhereSeen = version;
      // By id and claim: a run put back and claimed again while the look ran is another claim, left alone.
      const claimOf = new Map(runs.map((r) => [r.id, r.claim]));
      const stillOurs = (id: string, r: { claim: number } | undefined) => r !== undefined && r.claim === claimOf.get(id);
      const stopped = new Set([...cancelled, ...takenBack]);
      if (stopped.size === 0) return;
      this.ahead = this.ahead.filter((r) => !(stopped.has(r.id) && r.claim === claimOf.get(r.id)));
      for (const id of cancelled) {
        const a = this.active.get(id);
        if (!stillOurs(id, a?.run)) continue;
        this.recentlyCancelled.set(id, Date.now());
        a?.controller.abort(new RunAborted("cancelled"));
      }
      for (const id of takenBack) {
        const a = this.active.get(id);
        if (stillOurs(id, a?.run)) a?.controller.abort(new RunAborted("taken_back"));
      }
      log.info("runs stopped elsewhere were stopped here", { cancelled: cancelled.length, taken_back: takenBack.length });
    } catch (e) {
      log.warn("could not check whether running runs were stopped elsewhere", { error: (e as Error).message });
    } finally {
      this.elsewhereChecking = false;
    }
  }

  private leaseTimer: ReturnType<typeof setInterval> | null = null;
  private async renewLeases(): Promise<void> {
    try {
      await renewNodeLeases(this.core, [...this.active.keys(), ...this.ahead.map((r) => r.id)]);
    } catch (e) {
      log.warn("could not renew the leases of running runs", { error: (e as Error).message });
    }
  }

  healthy(): boolean {
    return this.started && !this.stopping && this.claimFailures < 3 && !this.claimStuck();
  }

  /** The worker processes executing runs, for GET /readyz. */
  workers(): WorkerHealth | null {
    return this.executor.health?.() ?? null;
  }

  /** Longer than three polls plus two busy-timeout waits: more than lock contention can explain. */
  private claimStuck(): boolean {
    return this.pumping !== null && performance.now() - this.pumpSince > 3 * POLL_MS + 2 * this.core.config.busy_timeout_ms;
  }

  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.poller) clearInterval(this.poller);
    if (this.elsewhereTimer) clearInterval(this.elsewhereTimer);
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    this.core.events.off("runQueued", this.onQueued);
    this.core.events.off("runCancelled", this.onCancelled);
    await this.pumping;
    // Runs claimed ahead never started: they go back to the queue for the next start (or another node).
    if (this.ahead.length > 0) await this.releaseAhead();
    if (this.active.size > 0) {
      log.info("waiting for running runs to finish", { runs: this.active.size, grace_ms: graceMs });
      await this.waitIdle(graceMs);
      for (const a of this.active.values()) a.controller.abort(new RunAborted("shutdown"));
      await this.waitIdle(5_000);
    }
    await this.writer.close();
    await this.executor.close();
    if (this.leaseTimer) clearInterval(this.leaseTimer);
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

  /**
   * Runs finishing close together share one claim instead of claiming one run each: at once when a quarter of the
   * slots is free (or with few slots), else after CLAIM_COALESCE_MS, so that with many slots a claim (one
   * statement and one commit) takes several runs.
   */
  private pumpImmediate = false;
  private pumpTimer: ReturnType<typeof setTimeout> | null = null;
  private pumpSoon(): void {
    if (this.pumpImmediate) return;
    const slots = this.core.config.runner.concurrency;
    if (slots - this.active.size >= Math.max(1, Math.floor(slots / 4))) {
      if (this.pumpTimer !== null) clearTimeout(this.pumpTimer);
      this.pumpTimer = null;
      this.pumpImmediate = true;
      setImmediate(() => {
        this.pumpImmediate = false;
        void this.pump();
      });
      return;
    }
    this.pumpTimer ??= setTimeout(() => {
      this.pumpTimer = null;
      void this.pump();
    }, CLAIM_COALESCE_MS);
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
        const slots = this.core.config.runner.concurrency;
        let free = slots - this.active.size;
        while (free > 0 && this.ahead.length > 0) {
          const run = this.ahead.shift() as ClaimedRun;
          // Cancelled before it started, as a queued run would be: the cancel already ended it.
          if (this.recentlyCancelled.has(run.id)) continue;
          this.launch(run);
          free--;
        }
        if (free <= 0) break;
        const runs = await claimQueuedRuns(this.core, free + aheadOf(slots, this.runMs));
        this.claimFailures = 0;
        for (const run of runs) {
          // The slots may have filled while the claim ran (stop, or another pass): the rest wait ahead.
          if (this.active.size < slots && !this.stopping) this.launch(run);
          else this.ahead.push(run);
        }
        if (runs.length === 0) {
          // Nothing executing, nothing ahead and nothing queued for this engine: the outcomes waiting for their batch
          // are the last for now, written at once (a group run's end is seen sooner). Deciding it as a run ends would
          // not do: runs ending in the same message from a worker all look like the last, and batches shrank.
          if (this.active.size === 0 && this.ahead.length === 0) this.writer.flushNow();
          if (!this.pumpAgain) break;
        }
      }
    } catch (e) {
      this.claimFailures++;
      log.error("could not claim queued runs", { error: (e as Error).message });
    }
  }

  private launch(claimed: ClaimedRun): void {
    const launched = performance.now();
    // It starts now: a run claimed ahead waited for its slot, which is not part of its time.
    const run = { ...claimed, startedAt: new Date().toISOString() };
    const active: ActiveRun = { run, controller: new AbortController(), progress: null, dirty: false };
    this.active.set(run.id, active);
    if (this.recentlyCancelled.has(run.id)) active.controller.abort(new RunAborted("cancelled"));
    const cfg = this.core.config.runner;
    this.executor
      .execute(run, {
        signal: active.controller.signal,
        settings: { defaultTimeoutMs: cfg.default_timeout_ms, excerptBytes: cfg.response_excerpt_bytes, maxResponseBytes: cfg.max_response_bytes },
        saveArtifact: (file, bytes) => saveRunArtifact(this.core, run.id, file, bytes),
        onProgress: (progress) => {
          active.progress = progress;
          active.dirty = true;
        },
      })
      .then((result) => {
        const ms = performance.now() - launched;
        this.runMs = Number.isFinite(this.runMs) ? this.runMs * 0.8 + ms * 0.2 : ms;
        const outcome = runOutcome(run, result);
        // Written in a batch; the last outcomes before the engine falls idle at once (see fillSlots).
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

  /** Long runs show their steps while they run, and a crash keeps what was done. */
  private async saveProgress(): Promise<void> {
    const now = Date.now();
    for (const a of this.active.values()) {
      if (!a.dirty || !a.progress || now - Date.parse(a.run.startedAt) < PROGRESS_AFTER_MS) continue;
      a.dirty = false;
      const { steps, summary, attempts } = a.progress;
      try {
        await recordRunProgress(this.core, a.run, { resultsJson: JSON.stringify({ steps, artifacts: [] }), summary, attempts });
      } catch (e) {
        log.warn("could not record run progress", { run_id: a.run.id, error: (e as Error).message });
      }
    }
  }
}

/** The run's final record from what execution came to. */
export function runOutcome(run: Pick<ClaimedRun, "id" | "claim" | "automationId" | "startedAt">, result: JobResult): RunOutcome {
  const finished = Date.now();
  return {
    id: run.id,
    claim: run.claim,
    automationId: run.automationId,
    status: result.status,
    startedAt: run.startedAt,
    finishedAt: new Date(finished).toISOString(),
    durationMs: Math.max(0, finished - Date.parse(run.startedAt)),
    error: result.error,
    failure: result.failure,
    summary: result.summary,
    resultsJson: result.resultsJson ?? JSON.stringify({ steps: result.steps, artifacts: result.artifacts }),
    attempts: result.attempts,
  };
}
