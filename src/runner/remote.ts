// `svc runner`: executes runs claimed from a server over HTTP. It says hello (version, labels, whether it can run
// a browser), claims runs with a long poll, marks those it begins, heart-beats (extending its leases and hearing
// of cancellations at once), uploads artifacts and finishes runs in batches. On SIGTERM it stops claiming, puts
// back what it had not begun, lets running runs finish within the grace period, then stops them.
import type { ClaimedJob, HeartbeatAnswer, HelloAnswer, HelloBody } from "../manifest/runner-protocol";
import { CLAIM_WAIT_MAX_MS, RUNNER_INSTANCE_HEADER, RUNNER_PREFIX, RUNNER_PROTOCOL } from "../manifest/runner-protocol";
import { RunSpecColumn } from "../core/shared/columns";
import { certificateProblem } from "../client/tls-trust";
import { log } from "../logging";
import { VERSION } from "../version";
import { findChromium } from "./chromium";
import { RunnerHealthFile } from "./health-file";
import type { JobProgress, JobResult, RunJob } from "./execute-run";
import type { RunExecutor } from "./executor";
import { WorkerPoolExecutor } from "./worker-pool";
import { RunAborted } from "./run-attempt";

/** Where `svc runner` executes runs: the one place that chooses the executor. */
export function runnerExecutor(browserPath: string | undefined, workers: number, concurrency: number): RunExecutor {
  // The same worker processes as the server's engine: no more of them than run slots.
  return new WorkerPoolExecutor({ workers: Math.min(workers, concurrency), browserPath });
}

export interface RemoteRunnerOptions {
  /** The server's base URL, without a trailing slash. */
  server: string;
  token: string;
  name?: string;
  labels: string[];
  concurrency: number;
  /** Worker processes the runs execute in (`runner.workers`). */
  workers: number;
  browserPath?: string;
  /** How long running runs may go on after SIGTERM before they are stopped. */
  graceMs: number;
  /** Where it notes when it last heard from the server, for `svc healthcheck` (default: runnerHealthPath()). */
  healthFile?: string;
}

/** A refusal the runner cannot get past by retrying (a bad token, an incompatible version). */
export class RunnerRefused extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** The server's TLS certificate was refused; the message says why and what fixes it. */
class UntrustedServer extends Error {}

class ProtocolError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The server's Retry-After, in ms, when it said when to ask again. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

interface Active {
  job: ClaimedJob;
  controller: AbortController;
  progress: JobProgress | null;
  dirty: boolean;
  lost: boolean;
  /**
   * When the last call that renewed its lease was sent (Date.now()): the server renewed it on receipt, so the lease
   * lasts at least `lease_ms` from here.
   */
  renewedAt: number;
}

/** How often a runner looks whether a run's lease may have run out for want of heartbeats the server took. */
const LEASE_WATCH_MS = 250;
/**
 * A run whose lease could not be renewed is stopped this long before the lease can end (at most 2 s, a fifth of a
 * short lease): by then the server may give it to another runner, and it must never execute twice at once.
 */
const leaseMarginMs = (leaseMs: number) => Math.min(2_000, Math.floor(leaseMs / 5));

const RETRY_MS = 1000;
/** The longest wait between two attempts to reach a server that is away (connecting, claiming). */
const RETRY_MAX_MS = 15_000;
/** While a server stays away, one log line per kind of call this often: a night of maintenance is a few lines. */
const RETRY_LOG_EVERY_MS = 60_000;

/**
 * How one kind of call retries while the server is away: after 1 s, then twice as long each time up to `maxMs`;
 * the first failure is logged, then one line a minute with the count, and the first success after them says so.
 */
export class RetryPace {
  private failures = 0;
  private loggedAt = 0;

  constructor(
    private readonly what: string,
    private readonly maxMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records a failure; answers how long to wait before the next attempt. */
  failed(fields: Record<string, unknown>): number {
    this.failures++;
    const waitMs = Math.min(this.maxMs, RETRY_MS * 2 ** Math.min(this.failures - 1, 16));
    const t = this.now();
    if (this.failures === 1 || t - this.loggedAt >= RETRY_LOG_EVERY_MS) {
      this.loggedAt = t;
      log.warn(`${this.what}; retrying`, { ...fields, failures: this.failures, retry_in_ms: waitMs });
    }
    return waitMs;
  }

  succeeded(): void {
    if (this.failures > 1) log.info(`${this.what}: the server answers again`, { failures: this.failures });
    this.failures = 0;
  }
}

/** True for a host that is this machine: plain http is allowed to it without --insecure-http. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1";
}

export class RemoteRunner {
  private readonly executor: RunExecutor;
  private readonly active = new Map<string, Active>();
  private readonly pendingFinish: { id: string; claim: number; result: JobResult }[] = [];
  private flushing: Promise<void> | null = null;
  private stopping = false;
  private readonly stopController = new AbortController();
  private slotFreed: (() => void) | null = null;
  private idle: (() => void) | null = null;
  private hello: HelloAnswer | null = null;
  /** Why the server stopped accepting this runner while it ran (its token was revoked), if it did: run() then ends
   * like a stop, and the command exits as it does for a token refused at hello. */
  refusal: string | null = null;
  /** The exit code for `refusal`: 3, the token was refused; 2, another process took it. */
  refusalExitCode = 3;
  /** This process, to the server (X-Svc-Runner-Instance): one token is held by one process at a time. */
  private readonly instance = crypto.randomUUID();
  readonly browser: boolean;

  constructor(private readonly opts: RemoteRunnerOptions) {
    this.browser = "path" in findChromium(opts.browserPath);
    this.executor = runnerExecutor(opts.browserPath, opts.workers, opts.concurrency);
    this.health = new RunnerHealthFile(opts.server, opts.healthFile);
  }

  private readonly health: RunnerHealthFile;

  private async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal, headers: Record<string, string> = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.opts.server}${RUNNER_PREFIX}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.opts.token}`,
          "user-agent": `svc-runner/${VERSION}`,
          [RUNNER_INSTANCE_HEADER]: this.instance,
          ...(body !== undefined && !(body instanceof Uint8Array) ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : body instanceof Uint8Array ? (body as unknown as BodyInit) : JSON.stringify(body),
        signal,
      });
    } catch (e) {
      const untrusted = certificateProblem(e, this.opts.server);
      throw untrusted !== null ? new UntrustedServer(untrusted) : e;
    }
    const text = await res.text();
    if (res.ok) this.health.contacted();
    else {
      let code = "unknown";
      let message = text.slice(0, 500);
      try {
        const e = JSON.parse(text) as { error?: string; message?: string };
        code = e.error ?? code;
        message = e.message ?? message;
      } catch {
        // not the API's error shape (a proxy's page): the text as it is
      }
      const retryAfter = Number(res.headers.get("retry-after") ?? "");
      throw new ProtocolError(res.status, code, message, res.headers.has("retry-after") && retryAfter >= 0 ? retryAfter * 1000 : null);
    }
    return JSON.parse(text) as T;
  }

  /** Says hello; a bad token or an incompatible version is a refusal, anything else is retried. */
  async connect(): Promise<HelloAnswer> {
    const body: HelloBody = {
      protocol: RUNNER_PROTOCOL,
      version: VERSION,
      name: this.opts.name,
      labels: this.opts.labels,
      capabilities: { browser: this.browser },
    };
    const pace = new RetryPace("cannot reach the server", RETRY_MAX_MS);
    let heldSince: number | null = null;
    for (;;) {
      try {
        this.hello = await this.call<HelloAnswer>("POST", "/hello", body, this.stopController.signal);
        pace.succeeded();
        log.info("runner connected", {
          server: this.opts.server,
          runner_id: this.hello.runner.id,
          name: this.hello.runner.name,
          labels: this.hello.runner.labels,
          browser: this.browser,
          concurrency: this.opts.concurrency,
          server_version: this.hello.server_version,
        });
        return this.hello;
      } catch (e) {
        if (e instanceof ProtocolError && e.status === 401) throw new RunnerRefused(`the server refused the runner token: ${e.message}`, 3);
        // Another process holds the token: this one waits for it to stop (a restart after a crash waits out the
        // dead one's lease), saying so once a minute.
        if (e instanceof ProtocolError && e.status === 409 && e.retryAfterMs !== null && !this.stopping) {
          const now = Date.now();
          if (heldSince === null || now - heldSince >= RETRY_LOG_EVERY_MS) {
            heldSince = now;
            log.warn("the runner token is in use by another svc runner process; waiting", { error: e.message, retry_in_ms: e.retryAfterMs });
          }
          // Asked again every second rather than at the Retry-After: a SIGTERM'd holder frees the token at once.
          await this.pause(RETRY_MS);
          continue;
        }
        if (e instanceof ProtocolError && e.status < 500 && e.status !== 429) throw new RunnerRefused(`the server refused the runner: ${e.message}`, 2);
        if (this.stopping) throw new RunnerRefused("stopped before the server answered", 0);
        // Retrying would meet the same certificate: the person starting the runner is told what fixes it.
        if (e instanceof UntrustedServer) throw new RunnerRefused(`cannot connect: ${e.message}`, 6);
        await this.pause(pace.failed({ server: this.opts.server, error: (e as Error).message }));
      }
    }
  }

  /** Runs until stop(): the claim loop and the heartbeat loop. */
  async run(): Promise<void> {
    if (!this.hello) await this.connect();
    const watch = setInterval(() => this.stopUnrenewed(), LEASE_WATCH_MS);
    const beats = this.heartbeatLoop();
    const renewals = this.renewLoop();
    await this.claimLoop();
    await this.drain();
    await beats;
    await renewals;
    clearInterval(watch);
    // The token is free for the next process at once (a restart, an upgrade), not a lease later.
    if (this.refusal === null) await this.call("POST", "/bye", {}, AbortSignal.timeout(5_000)).catch(() => undefined);
    await this.executor.close();
    this.health.remove();
  }

  /** Stops claiming; running runs get the grace period, then are stopped; resolves through run(). */
  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.stopController.abort();
    this.slotFreed?.();
  }

  /**
   * Stops the runs whose leases may end before this runner could renew them (the server unreachable, or refusing
   * its heartbeats): once a lease ends the server ends the run or gives it to another runner, and a run must never
   * execute twice at once. They are not finished from here: the server's lease decides what they come to.
   */
  private stopUnrenewed(): void {
    const leaseMs = this.hello?.lease_ms ?? 30_000;
    const now = Date.now();
    for (const a of this.active.values()) {
      if (a.lost || now < a.renewedAt + leaseMs - leaseMarginMs(leaseMs)) continue;
      a.lost = true;
      a.controller.abort(new RunAborted("taken_back"));
      log.warn(
        "the server has not taken a heartbeat for this run for almost its lease: it is stopped here, as the server will end it or give it to another runner",
        {
          run_id: a.job.id,
          unrenewed_ms: now - a.renewedAt,
          lease_ms: leaseMs,
        },
      );
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      const signal = this.stopController.signal;
      function done() {
        clearTimeout(t);
        signal.removeEventListener("abort", done);
        resolve();
      }
      signal.addEventListener("abort", done, { once: true });
    });
  }

  private async claimLoop(): Promise<void> {
    const pace = new RetryPace("could not claim runs", RETRY_MAX_MS);
    while (!this.stopping) {
      const free = this.opts.concurrency - this.active.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => {
          this.slotFreed = resolve;
        });
        this.slotFreed = null;
        continue;
      }
      let jobs: ClaimedJob[];
      try {
        jobs = (await this.call<{ jobs: ClaimedJob[] }>("POST", "/claim", { slots: free, wait_ms: CLAIM_WAIT_MAX_MS }, this.stopController.signal)).jobs;
      } catch (e) {
        if (this.stopping) break;
        if (e instanceof ProtocolError && (e.status === 401 || e.status === 409)) {
          this.refused(e);
          break;
        }
        await this.pause(pace.failed({ error: (e as Error).message }));
        continue;
      }
      pace.succeeded();
      if (jobs.length === 0) continue;
      const refs = jobs.map((j) => ({ id: j.id, claim: j.claim }));
      if (this.stopping) {
        await this.release(refs);
        break;
      }
      let started: Set<string>;
      const startSentAt = Date.now();
      try {
        started = new Set((await this.call<{ started: { id: string }[] }>("POST", "/start", { runs: refs })).started.map((s) => s.id));
      } catch (e) {
        // Not begun: the lease brings them back to the queue.
        log.warn("could not begin claimed runs; their leases will return them to the queue", { runs: refs.length, error: (e as Error).message });
        continue;
      }
      for (const job of jobs) if (started.has(job.id)) this.launch(job, startSentAt);
    }
  }

  /** Runs this runner began and stopped before their end: the server decides what they come to now, not a lease later. */
  private async handBack(runs: { id: string; claim: number }[]): Promise<void> {
    try {
      await this.call("POST", "/release", { runs }, AbortSignal.timeout(10_000));
      log.info("runs still running at the end of the grace period were handed back: queued again while their retries allow", { runs: runs.length });
    } catch (e) {
      log.warn("could not hand runs back; their leases will", { runs: runs.length, error: (e as Error).message });
    }
  }

  private async release(runs: { id: string; claim: number }[]): Promise<void> {
    try {
      await this.call("POST", "/release", { runs });
      log.info("runs not begun were put back in the queue", { runs: runs.length });
    } catch (e) {
      log.warn("could not put runs back; their leases will", { runs: runs.length, error: (e as Error).message });
    }
  }

  private launch(job: ClaimedJob, leaseRenewedAt: number): void {
    const active: Active = { job, controller: new AbortController(), progress: null, dirty: false, lost: false, renewedAt: leaseRenewedAt };
    this.active.set(job.id, active);
    const settings = this.hello?.settings ?? { default_timeout_ms: 300_000, response_excerpt_bytes: 8192, max_response_bytes: 32 * 1024 * 1024 };
    let spec: RunJob["spec"] = null;
    try {
      const parsed = RunSpecColumn.safeParse(JSON.parse(job.spec_text));
      spec = parsed.success ? parsed.data : null;
    } catch {
      spec = null;
    }
    const run: RunJob = {
      id: job.id,
      automationId: job.automation_id,
      spec,
      specText: job.spec_text,
      environmentId: job.environment_id,
      environment: job.environment,
      priorAttempts: job.prior_attempts ?? [],
    };
    log.info("run started", { run_id: job.id, automation_id: job.automation_id });
    // The heartbeat in flight does not name this run yet: the next one does, so its cancellation is heard at once.
    this.heartbeatNudge?.();
    this.executor
      .execute(run, {
        signal: active.controller.signal,
        settings: {
          defaultTimeoutMs: settings.default_timeout_ms,
          excerptBytes: settings.response_excerpt_bytes,
          maxResponseBytes: settings.max_response_bytes,
        },
        saveArtifact: (file, bytes) =>
          this.call("PUT", `/runs/${encodeURIComponent(job.id)}/artifacts/${encodeURIComponent(file)}`, bytes, undefined, {
            "x-svc-claim": String(job.claim),
            "content-type": "application/octet-stream",
          }).then(() => undefined),
        onProgress: (progress) => {
          active.progress = progress;
          active.dirty = true;
        },
      })
      .then((result) => {
        // Masked already: the log never holds a secret the results would hide.
        log.info("run finished", { run_id: job.id, status: result.status, ...(result.error !== null ? { error: result.error } : {}) });
        if (active.lost) return;
        // The protocol carries the steps themselves; the pool's pre-serialized copy is for the server's own writer.
        const { resultsJson: _serialized, ...sent } = result;
        this.pendingFinish.push({ id: job.id, claim: job.claim, result: sent });
        void this.flushFinished();
      })
      .finally(() => {
        this.active.delete(job.id);
        this.slotFreed?.();
        if (this.active.size === 0) this.idle?.();
      });
  }

  /** Sends finished runs in batches; a failed send is retried until the server takes it or the lease is long gone. */
  private flushFinished(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      await Promise.resolve();
      const giveUpAt = Date.now() + 2 * (this.hello?.lease_ms ?? 30_000);
      while (this.pendingFinish.length > 0) {
        const batch = this.pendingFinish.splice(0, 100);
        try {
          await this.call("POST", "/finish", { runs: batch });
        } catch (e) {
          if (Date.now() > giveUpAt || (e instanceof ProtocolError && e.status < 500 && e.status !== 429)) {
            log.error("could not record finished runs", { runs: batch.length, error: (e as Error).message });
            continue;
          }
          this.pendingFinish.unshift(...batch);
          await Bun.sleep(RETRY_MS);
        }
      }
    })().finally(() => {
      this.flushing = null;
      if (this.pendingFinish.length > 0) void this.flushFinished();
    });
    return this.flushing;
  }

  /** Extends the leases and hears of cancellations: the server answers at once when one of its runs is cancelled. */
  private async heartbeatLoop(): Promise<void> {
    const wait = this.hello?.heartbeat_wait_ms ?? 10_000;
    // Never longer apart than a heartbeat's wait while failing: the leases of running runs depend on them.
    const pace = new RetryPace("heartbeat failed", Math.max(RETRY_MS, wait));
    // Ends only once stopping and nothing runs: leases must last while runs finish during the grace period.
    while (!(this.stopping && this.active.size === 0)) {
      const runs = [...this.active.values()].map((a) => {
        const progress = a.dirty && a.progress ? a.progress : undefined;
        a.dirty = false;
        return { id: a.job.id, claim: a.job.claim, ...(progress ? { progress } : {}) };
      });
      const beat = new AbortController();
      const stopWaiting = () => beat.abort();
      // A new run or the end of one sends the next heartbeat at once (with the runs it holds now).
      this.heartbeatNudge = stopWaiting;
      const sentAt = Date.now();
      try {
        const answer = await this.call<HeartbeatAnswer>("POST", "/heartbeat", { runs, wait_ms: this.stopping ? 0 : wait }, beat.signal);
        this.heard(runs, sentAt, answer);
        pace.succeeded();
      } catch (e) {
        if (beat.signal.aborted) continue;
        if (e instanceof ProtocolError && (e.status === 401 || e.status === 409)) {
          this.refused(e);
          // Its runs are stopping; until they have, the next heartbeat (refused too) is not sent at once.
          await Bun.sleep(RETRY_MS);
          continue;
        }
        await Bun.sleep(pace.failed({ error: (e as Error).message }));
      } finally {
        this.heartbeatNudge = null;
      }
      if (this.stopping && this.active.size > 0) await Bun.sleep(Math.min(wait, 1000));
    }
  }

  private heartbeatNudge: (() => void) | null = null;

  /** A heartbeat the server answered: the leases of the runs it named were renewed when it arrived; what it says. */
  private heard(runs: { id: string; claim: number }[], sentAt: number, answer: HeartbeatAnswer): void {
    for (const r of runs) {
      const a = this.active.get(r.id);
      if (a && a.job.claim === r.claim) a.renewedAt = Math.max(a.renewedAt, sentAt);
    }
    for (const id of answer.cancelled) this.active.get(id)?.controller.abort(new RunAborted("cancelled"));
    for (const id of answer.lost) {
      const a = this.active.get(id);
      if (!a || a.lost) continue;
      a.lost = true;
      a.controller.abort(new RunAborted("taken_back"));
      log.warn("the server took back a run (its lease expired): stopped", { run_id: id });
    }
  }

  /**
   * Renews the leases with short heartbeats of their own, a few per lease: the waiting heartbeat is cut short
   * whenever a run starts or ends (so that it names them), and while runs start one after another it may never be
   * answered; what renewed the leases must be known for sure (see stopUnrenewed).
   */
  private async renewLoop(): Promise<void> {
    const leaseMs = this.hello?.lease_ms ?? 30_000;
    const every = Math.max(200, Math.floor(leaseMs / 4));
    while (!(this.stopping && this.active.size === 0)) {
      // Stopping, pause() no longer waits: the runs finishing in the grace period still need their leases.
      await (this.stopping ? Bun.sleep(every) : this.pause(every));
      const runs = [...this.active.values()].filter((a) => !a.lost).map((a) => ({ id: a.job.id, claim: a.job.claim }));
      if (runs.length === 0) continue;
      const sentAt = Date.now();
      try {
        this.heard(runs, sentAt, await this.call<HeartbeatAnswer>("POST", "/heartbeat", { runs, wait_ms: 0 }, AbortSignal.timeout(every)));
      } catch {
        // The waiting heartbeat says what went wrong; without renewals, stopUnrenewed stops the runs in time.
      }
    }
  }

  /**
   * The server stopped accepting the token (it was revoked): nothing this runner does can be recorded any more, so
   * its runs stop now (their leases end them on the server) and it stops.
   */
  private refused(e: ProtocolError): void {
    if (this.refusal !== null) return;
    if (e.status === 409) {
      log.error("another svc runner process took the runner token; stopping", { error: e.message });
      this.refusal = `another svc runner process took the runner token: ${e.message}`;
      this.refusalExitCode = 2;
    } else {
      log.error("the server no longer accepts the runner token; stopping", { error: e.message });
      this.refusal = `the server no longer accepts the runner token (it was revoked, or the runner deleted): ${e.message}`;
    }
    for (const a of this.active.values()) a.controller.abort(new RunAborted("runner_stopped"));
    this.stop();
  }

  /** After stop(): lets running runs finish within the grace period, then stops them; sends what they came to. */
  private async drain(): Promise<void> {
    this.heartbeatNudge?.();
    if (this.active.size > 0) {
      log.info("waiting for running runs to finish", { runs: this.active.size, grace_ms: this.opts.graceMs });
      await this.waitIdle(this.opts.graceMs);
      // Still running at the end of the grace period: stopped here, then handed back to the server, which keeps
      // their execution as an attempt and queues them again while their retries allow — as after a crash, at once.
      const handBack = [...this.active.values()].filter((a) => !a.lost);
      for (const a of handBack) {
        a.lost = true;
        a.controller.abort(new RunAborted("runner_stopped"));
      }
      await this.waitIdle(5_000);
      if (handBack.length > 0 && this.refusal === null) await this.handBack(handBack.map((a) => ({ id: a.job.id, claim: a.job.claim })));
    }
    await this.flushFinished();
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
}
