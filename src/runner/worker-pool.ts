// Runs execute in worker processes spawned from this executable: `runner.workers` of them, each running several
// runs at once, new runs going to the least busy. A worker holds no database handle, gets a minimal environment
// (no SVC_* setting, no secrets key, no API key) and, on Linux, the OS keeps it out of the server's files: when
// the server runs as root it runs as the unprivileged user `nobody`; otherwise in namespaces of its own that hide
// the data directory and the server's files. A run that is cancelled or passes its timeout is aborted in its
// worker; if it has not ended within a short grace, the worker is killed and replaced.
import { dlopen, FFIType } from "bun:ffi";
import { chmodSync, chownSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import type { WorkersCheck } from "../core/health";
import { type Level, log } from "../logging";
import { abortedStatus, type JobProgress, type JobResult, type RunJob, summarize } from "./execute-run";
import type { ExecuteOptions, RunExecutor } from "./executor";
import { RunAborted } from "./run-attempt";
import { batchedSender, type FromWorker, type ToWorker, WORKER_COMMAND, type WireResult } from "./worker-protocol";

/** How long an aborted run may take to stop by itself before its worker is killed. */
export const KILL_GRACE_MS = 300;
/** How long a new worker may take to report ready before it is killed and replaced (its runs end `error`). */
export const START_LIMIT_MS = 30_000;
/** A worker that dies this soon after it started, twice in a row, is not restarted at once. */
const EARLY_DEATH_MS = 2_000;
const RESTART_BACKOFF_MS = 1_000;
const NOBODY = 65534;
/** The environment variables a worker inherits: what fetch and Chromium need, nothing of svc's own. */
const PASSED_ENV = [
  "PATH",
  "LANG",
  "LC_ALL",
  "TZ",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
];

export type Isolation = WorkersCheck["isolation"];

/**
 * Run as root of a fresh user namespace (mapped to the server's user) with its own mount namespace: hides each path
 * given before "--" (a directory under an empty tmpfs no one may enter, a file under /dev/null), then becomes the
 * server's uid and gid again in a nested user namespace, with no capability left (it cannot undo the mounts), and
 * runs the worker. Arguments: uid, gid, the unshare executable, the paths, "--", the worker's command.
 */
const HIDE_AND_DROP = `set -e
uid=$1; gid=$2; unshare=$3; shift 3
while [ "$1" != "--" ]; do
  if [ -d "$1" ]; then mount -t tmpfs -o size=4k,mode=000 svc-hidden "$1"; else mount --bind /dev/null "$1"; fi
  shift
done
shift
exec "$unshare" --user --map-user="$uid" --map-group="$gid" -- "$@"`;
/** Its own PID namespace too (the server's processes out of sight and out of reach of signals), where /proc can be mounted anew. */
const NAMESPACES_WITH_PIDS = ["--user", "--map-root-user", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"];
/** Under a hardened systemd unit (ProtectKernelTunables puts mounts over /proc) a new /proc is refused: user and mount namespaces. */
const NAMESPACES = ["--user", "--map-root-user", "--mount"];

function namespacePrefix(unshare: string, flags: string[], hidden: string[]): string[] {
  const ids = [String(process.getuid?.() ?? 0), String(process.getgid?.() ?? 0)];
  return [unshare, ...flags, "--", "/bin/sh", "-c", HIDE_AND_DROP, "sh", ...ids, unshare, ...hidden, "--"];
}

/** Whether namespaces with these flags can be made here and hide a file from what runs inside (tried once, at start). */
function namespacesWork(unshare: string, flags: string[]): boolean {
  const dir = mkdtempSync(join(tmpdir(), "svc-namespace-probe-"));
  try {
    writeFileSync(join(dir, "probe"), "x");
    const r = Bun.spawnSync([...namespacePrefix(unshare, flags, [dir]), "/bin/sh", "-c", '! cat "$1" 2>/dev/null', "sh", join(dir, "probe")], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    return r.exitCode === 0;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Makes this process non-dumpable (prctl PR_SET_DUMPABLE 0): processes of the same user, the workers included, can
 * then no longer read its memory, environment, open files or root through /proc. False where it cannot be done.
 */
function makeUndumpable(): boolean {
  try {
    const libc = dlopen("libc.so.6", { prctl: { args: [FFIType.i32, FFIType.u64, FFIType.u64, FFIType.u64, FFIType.u64], returns: FFIType.i32 } });
    const ok = libc.symbols.prctl(4, 0n, 0n, 0n, 0n) === 0;
    libc.close();
    return ok;
  } catch {
    return false;
  }
}

/**
 * The start of the workers' HOME names: with the PID namespace, because a process id means something only in its
 * own (a temporary directory shared by containers must not lose another container's live HOME).
 */
function homeOwner(): string {
  let ns = "0";
  try {
    ns = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";
  } catch {}
  return `svc-worker-${ns}-`;
}

/** Removes the workers' HOMEs (named `owner`, a process id, six characters) whose server process is gone. */
function removeOrphanedHomes(owner: string): void {
  const dir = tmpdir();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(owner)) continue;
    const pid = Number(/^(\d+)-[A-Za-z0-9]{6}$/.exec(name.slice(owner.length))?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || processAlive(pid)) continue;
    try {
      // Only what a pool makes: a directory (not a link) owned by this user or by the workers' (another local
      // user's entry of the same name in a shared temporary directory is not ours to remove).
      const st = lstatSync(join(dir, name));
      if (!st.isDirectory() || (st.uid !== process.getuid?.() && st.uid !== NOBODY)) continue;
      rmSync(join(dir, name), { recursive: true, force: true });
    } catch {}
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, as another user's process.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Files the workers must not read besides the data directory (the config file: `svc serve` names it at start). */
const hiddenFiles = new Set<string>();
export function hideFromWorkers(path: string): void {
  hiddenFiles.add(path);
}

export interface WorkerPoolOptions {
  /** Worker processes (`runner.workers`); default: the CPU cores. */
  workers?: number;
  browserPath?: string;
  /** The server's log level, for what workers log (a browser started, a sandbox missing). */
  logLevel?: Level;
  /** The data directory: workers must not read it (made private to the server's user when workers run as another). */
  dataDir?: string | null;
  /** Other paths the workers must not read (the secrets key file); hidden where workers get namespaces. */
  hiddenPaths?: string[];
  /** The file workers try to open at start, to report whether the OS keeps them out (the database). */
  probePath?: string | null;
  graceMs?: number;
  /** How long a new worker may take to start (default START_LIMIT_MS). */
  startLimitMs?: number;
}

/** What GET /readyz shows of the workers. */
export type WorkerHealth = WorkersCheck;

interface PendingRun {
  job: RunJob;
  options: ExecuteOptions;
  worker: Worker;
  resolve(result: JobResult): void;
  progress: JobProgress | null;
  aborted: RunAborted["reason"] | null;
  killTimer: ReturnType<typeof setTimeout> | null;
  deadline: ReturnType<typeof setTimeout> | null;
  timeoutMs: number;
  onAbort: () => void;
}

interface Worker {
  proc: Subprocess;
  pid: number;
  runs: Map<string, PendingRun>;
  ready: boolean;
  startedAt: number;
  /** Why the pool killed it; null while it lives or when it died by itself. */
  killedFor: string | null;
  /** Sends to the worker, everything posted in one turn of the event loop as one message. */
  post: (m: ToWorker) => void;
}

/** The command that starts a worker: the compiled executable's hidden subcommand, or bun with the worker's source. */
export function workerCommand(): string[] {
  if (process.env.SVC_COMPILED === "1") return [process.execPath, WORKER_COMMAND];
  return [process.execPath, join(import.meta.dir, "worker-main.ts")];
}

function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? "/usr/bin:/bin").split(":")) {
    const p = join(dir, name);
    if (dir && existsSync(p)) return p;
  }
  return null;
}

/** Whether `chrt --batch 0` can start a process here (a container's seccomp profile may refuse sched_setscheduler). */
function batchSchedulingWorks(chrt: string): boolean {
  try {
    return Bun.spawnSync([chrt, "--batch", "0", "/bin/sh", "-c", "exit 0"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
}

/** Every process below `pid` (Linux /proc), deepest last. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  try {
    for (const name of readdirSync("/proc")) {
      if (name.charCodeAt(0) > 57) continue;
      try {
        const stat = readFileSync(`/proc/${name}/stat`, "utf8");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        const list = children.get(ppid);
        if (list) list.push(Number(name));
        else children.set(ppid, [Number(name)]);
      } catch {}
    }
  } catch {
    return [];
  }
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0) {
    for (const c of children.get(todo.pop() as number) ?? []) {
      out.push(c);
      todo.push(c);
    }
  }
  return out;
}

function killTree(pid: number): void {
  // Chromium started by a worker sits in its own process group: find it through /proc before the worker goes.
  const below = descendants(pid);
  for (const p of [pid, ...below]) {
    try {
      process.kill(p, "SIGKILL");
    } catch {}
  }
}

/** The outcome with its steps read from their JSON only when someone asks (the engine records the JSON as it is). */
function jobResult(wire: WireResult): JobResult {
  let steps: JobResult["steps"] | null = null;
  return Object.defineProperty({ ...wire }, "steps", {
    enumerable: true,
    get: () => {
      steps ??= (JSON.parse(wire.resultsJson) as { steps: JobResult["steps"] }).steps;
      return steps;
    },
  }) as JobResult;
}

function abortedResult(reason: RunAborted["reason"], timeoutMs: number, run: Pick<PendingRun, "progress" | "job">): JobResult {
  const [status, error] = abortedStatus(reason, timeoutMs);
  return stoppedResult(status, error, run);
}

/** A run stopped from outside its worker: what its progress reached, and one more attempt that says why. */
function stoppedResult(status: JobResult["status"], error: string, run: Pick<PendingRun, "progress" | "job">): JobResult {
  const steps = run.progress?.steps ?? [];
  // Progress carries the attempts before it, those made before the run's claim included.
  const attempts = run.progress?.attempts ?? run.job.priorAttempts ?? [];
  return {
    status,
    error,
    summary: summarize(steps),
    steps,
    artifacts: [],
    attempts: [...attempts, { attempt: attempts.length + 1, status, error, message: error, duration_ms: 0 }],
  };
}

export class WorkerPoolExecutor implements RunExecutor {
  private readonly size: number;
  private readonly graceMs: number;
  private readonly startLimitMs: number;
  private readonly workers: Worker[] = [];
  private readonly prefix: string[];
  readonly isolation: Isolation;
  private readonly home: string;
  private closed = false;
  private replaced = 0;
  private earlyDeaths = 0;
  private restartTimer: ReturnType<typeof setTimeout> | null = null;
  private lastProblem: string | null = null;
  private databaseReadable: boolean | null = null;
  /** The Chromium the workers found when they started, or why they found none. */
  private browser: { path: string } | { problem: string } | null = null;
  /** In namespace isolation: whether workers have their own PID namespace too. */
  private pidNamespace = false;
  private readonly scheduling: WorkersCheck["scheduling"];

  constructor(private readonly options: WorkerPoolOptions = {}) {
    this.size = Math.max(1, options.workers ?? availableParallelism());
    this.graceMs = options.graceMs ?? KILL_GRACE_MS;
    this.startLimitMs = options.startLimitMs ?? START_LIMIT_MS;
    const linux = process.platform === "linux";
    const setpriv = linux ? which("setpriv") : null;
    const root = process.getuid?.() === 0;
    let isolation: Isolation = root && setpriv ? "uid" : "construction";
    let namespaces: string[] = [];
    const unshare = linux && !root ? which("unshare") : null;
    if (unshare) {
      const flags = [NAMESPACES_WITH_PIDS, NAMESPACES].find((f) => namespacesWork(unshare, f));
      // Closed to its own user in any case; without a PID namespace the server's /proc entries stay in sight, so
      // namespaces alone are not enough where that cannot be done.
      const undumpable = flags !== undefined && makeUndumpable();
      if (flags && (undumpable || flags === NAMESPACES_WITH_PIDS)) {
        isolation = "namespace";
        // Absolute: the worker starts in its own HOME, and a relative data directory is relative to the server's.
        const hidden = [options.dataDir, ...(options.hiddenPaths ?? []), ...hiddenFiles]
          .filter((p): p is string => !!p && existsSync(p))
          .map((p) => resolve(p));
        // A path inside a hidden directory is hidden with it (and could not be mounted over once the directory is).
        const outermost = [...new Set(hidden)].filter((p) => !hidden.some((d) => p.startsWith(`${d}/`)));
        namespaces = namespacePrefix(unshare, flags, outermost);
        this.pidNamespace = flags === NAMESPACES_WITH_PIDS;
      }
    }
    // A fresh HOME for Chromium's profile, owned by whoever the workers run as; named after this process, so that
    // the next start removes those of servers that were killed before they could (SIGKILL, power loss).
    const owner = homeOwner();
    removeOrphanedHomes(owner);
    this.home = mkdtempSync(join(tmpdir(), `${owner}${process.pid}-`));
    if (isolation === "uid") {
      try {
        chownSync(this.home, NOBODY, NOBODY);
      } catch (e) {
        // Some namespaces (a container's user namespace without nobody mapped) refuse it: isolation by construction then.
        isolation = "construction";
        log.warn("run workers cannot run as nobody here: they run as the server's user, isolated by construction", {
          error: (e as Error).message,
        });
      }
    }
    this.isolation = isolation;
    if (this.isolation === "uid") {
      const dir = options.dataDir;
      if (dir && existsSync(dir) && (statSync(dir).mode & 0o077) !== 0) {
        chmodSync(dir, 0o700);
        log.warn("the data directory was readable by other users: it is now private to the server's user", { data_dir: dir });
      }
    }
    // chrt --batch: workers (and the Chromium they start) run under SCHED_BATCH, which never preempts on wakeup: a
    // worker woken by a job, or by its target's answer, waits for the API's thread to yield instead of taking its
    // core from under it (on 2 cores that made every hand-over to a worker cost the server ~4x its own CPU in wall
    // time). They still get their fair share of the CPU.
    const chrt = linux ? which("chrt") : null;
    this.scheduling = chrt && batchSchedulingWorks(chrt) ? "batch" : "normal";
    // setpriv: the kernel kills a worker when the server dies (also on SIGKILL), and as root the worker drops to nobody.
    this.prefix = [
      ...(this.scheduling === "batch" ? [chrt as string, "--batch", "0"] : []),
      ...(setpriv
        ? [setpriv, ...(this.isolation === "uid" ? [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups"] : []), "--pdeathsig=KILL", "--"]
        : []),
      ...namespaces,
    ];
    for (let i = 0; i < this.size; i++) this.workers.push(this.spawn());
  }

  private spawn(): Worker {
    const env: Record<string, string> = { HOME: this.home };
    for (const k of PASSED_ENV) {
      const v = process.env[k];
      if (v !== undefined) env[k] = v;
    }
    const w = {} as Worker;
    const proc = Bun.spawn([...this.prefix, ...workerCommand()], {
      env,
      cwd: this.home,
      stdin: "ignore",
      stdout: "ignore",
      stderr: "inherit",
      detached: true,
      serialization: "json",
      ipc: (batch: FromWorker[]) => this.receive(w, batch),
    });
    const post = batchedSender<ToWorker>(queueMicrotask, (batch) => {
      if (w.killedFor !== null || proc.exitCode !== null || proc.signalCode !== null) return;
      try {
        proc.send(batch);
      } catch (e) {
        log.warn("could not reach a run worker", { pid: w.pid, error: (e as Error).message });
      }
    });
    Object.assign(w, { proc, pid: proc.pid, runs: new Map(), ready: false, startedAt: performance.now(), killedFor: null, post });
    // A worker not ready in time is killed and replaced; one that got ready, died or was stopped meanwhile is let be.
    setTimeout(() => {
      if (w.ready || w.killedFor !== null || this.closed) return;
      this.earlyDeaths++;
      this.lastProblem = `a run worker process did not start within ${this.startLimitMs} ms: see the server's log`;
      log.error("a run worker process did not start in time; it is killed and replaced", { pid: w.pid, limit_ms: this.startLimitMs });
      this.kill(w, `it did not start within ${this.startLimitMs} ms`);
    }, this.startLimitMs).unref();
    w.post({
      t: "init",
      browserPath: this.options.browserPath,
      logLevel: this.options.logLevel ?? "info",
      probePath: this.options.probePath ?? null,
    });
    void proc.exited.then(() => this.exited(w));
    return w;
  }

  private receive(w: Worker, batch: FromWorker[]): void {
    for (const m of batch) {
      if (m.t === "ready") {
        w.ready = true;
        // Runs handed over while it started: their clocks start now, not while it was still loading.
        for (const run of w.runs.values()) this.startClock(run);
        this.earlyDeaths = 0;
        this.lastProblem = null;
        this.databaseReadable = m.probeReadable;
        this.browser = m.browser;
        if (this.isolation !== "construction" && m.probeReadable) {
          this.lastProblem =
            this.isolation === "uid"
              ? "a worker process can read the database file: make the data directory private to the server's user"
              : "a worker process can read the database file although its namespace hides the data directory: see the server's log";
          log.error(this.lastProblem, { pid: m.pid });
        }
        continue;
      }
      const run = w.runs.get(m.id);
      if (!run) continue;
      if (m.t === "progress") {
        run.progress = m.progress;
        run.options.onProgress?.(m.progress);
      } else if (m.t === "artifact") {
        run.options.saveArtifact(m.file, Buffer.from(m.base64, "base64")).then(
          () => w.post({ t: "saved", id: m.id, seq: m.seq, error: null }),
          (e) => w.post({ t: "saved", id: m.id, seq: m.seq, error: (e as Error).message }),
        );
      } else if (m.t === "done") this.settle(run, jobResult(m.result));
    }
  }

  private settle(run: PendingRun, result: JobResult): void {
    if (run.worker.runs.get(run.job.id) !== run) return;
    run.worker.runs.delete(run.job.id);
    if (run.killTimer) clearTimeout(run.killTimer);
    if (run.deadline) clearTimeout(run.deadline);
    run.options.signal.removeEventListener("abort", run.onAbort);
    run.resolve(result);
  }

  /** The least busy live worker. */
  private pick(): Worker | null {
    let best: Worker | null = null;
    for (const w of this.workers) {
      if (w.killedFor !== null) continue;
      if (!best || w.runs.size < best.runs.size || (w.runs.size === best.runs.size && w.ready && !best.ready)) best = w;
    }
    return best;
  }

  execute(job: RunJob, options: ExecuteOptions): Promise<JobResult> {
    return new Promise<JobResult>((resolve) => {
      const worker = this.closed ? null : this.pick();
      if (!worker) {
        resolve(
          stoppedResult(
            "error",
            "no run worker process is available (the server is stopping or its workers cannot start): see the server's log and run it again",
            { progress: null, job },
          ),
        );
        return;
      }
      const spec = job.spec;
      const timeoutMs = spec && spec.timeout_ms > 0 ? spec.timeout_ms : options.settings.defaultTimeoutMs;
      const run: PendingRun = {
        job,
        options,
        worker,
        resolve,
        progress: null,
        aborted: null,
        killTimer: null,
        deadline: null,
        timeoutMs,
        onAbort: () => this.abort(run, options.signal.reason instanceof RunAborted ? options.signal.reason.reason : "cancelled"),
      };
      worker.runs.set(job.id, run);
      const { id, automationId, specText, environmentId, environment, priorAttempts } = job;
      const wire = { id, automationId, specText, specReadable: spec !== null, environmentId, environment };
      worker.post({ t: "run", job: priorAttempts?.length ? { ...wire, priorAttempts } : wire, settings: options.settings });
      if (worker.ready) this.startClock(run);
      if (options.signal.aborted) run.onAbort();
      else options.signal.addEventListener("abort", run.onAbort, { once: true });
    });
  }

  /**
   * The worker times the run itself; this is for a worker too busy to notice (a step that never yields): it gets
   * the same grace as a cancel before it is killed. It starts once the worker is ready, as the worker's own clock
   * does: a worker still starting (a loaded machine, a server just started) must not spend the run's time.
   */
  private startClock(run: PendingRun): void {
    if (run.deadline || run.aborted) return;
    run.deadline = setTimeout(() => this.abort(run, "timeout"), run.timeoutMs);
  }

  /** Asks the worker to stop the run; a worker that has not ended it after the grace is killed. */
  private abort(run: PendingRun, reason: RunAborted["reason"]): void {
    if (run.aborted) return;
    run.aborted = reason;
    run.worker.post({ t: "abort", id: run.job.id, reason });
    run.killTimer = setTimeout(() => {
      if (run.worker.runs.get(run.job.id) !== run) return;
      log.warn("a run did not stop in time: its worker process is killed and replaced", {
        run_id: run.job.id,
        reason,
        pid: run.worker.pid,
        other_runs: run.worker.runs.size - 1,
      });
      this.settle(run, abortedResult(reason, run.timeoutMs, run));
      this.kill(
        run.worker,
        `a run on the same worker process was ${reason === "timeout" ? "timed out" : reason === "cancelled" ? "cancelled" : "stopped"} and did not stop in time`,
      );
    }, this.graceMs);
  }

  /** Kills a worker, whatever it is doing; its other runs end `error`, and a new worker takes its place. */
  private kill(w: Worker, why: string): void {
    if (w.killedFor !== null) return;
    w.killedFor = why;
    killTree(w.pid);
    for (const run of [...w.runs.values()]) {
      this.settle(run, stoppedResult("error", `the worker process executing the run was stopped because ${why}: run it again`, run));
    }
    this.replace(w);
  }

  private exited(w: Worker): void {
    if (w.killedFor === null) {
      w.killedFor = "it exited";
      const how = w.proc.signalCode ? `killed by ${w.proc.signalCode}` : `exit code ${w.proc.exitCode}`;
      if (!this.closed) log.error("a run worker process stopped unexpectedly; it is replaced", { pid: w.pid, how, runs: w.runs.size });
      for (const run of [...w.runs.values()]) {
        this.settle(run, stoppedResult("error", `the worker process executing the run stopped unexpectedly (${how}): run it again`, run));
      }
      if (!w.ready) {
        this.earlyDeaths++;
        this.lastProblem = `a run worker process could not start (${how}): see the server's log`;
      } else if (performance.now() - w.startedAt < EARLY_DEATH_MS) this.earlyDeaths++;
      this.replace(w);
    }
  }

  private replace(w: Worker): void {
    const i = this.workers.indexOf(w);
    if (i < 0 || this.closed) return;
    this.replaced++;
    if (this.earlyDeaths >= 2) {
      // A worker that cannot start would be respawned in a tight loop: wait before trying again.
      this.workers.splice(i, 1);
      if (!this.restartTimer)
        this.restartTimer = setTimeout(() => {
          this.restartTimer = null;
          while (!this.closed && this.workers.length < this.size) this.workers.push(this.spawn());
        }, RESTART_BACKOFF_MS);
      return;
    }
    this.workers[i] = this.spawn();
  }

  health(): WorkerHealth {
    const live = this.workers.filter((w) => w.killedFor === null);
    const ready = live.filter((w) => w.ready).length;
    let running = 0;
    for (const w of live) running += w.runs.size;
    const ok = this.lastProblem === null && live.length > 0;
    return {
      ok,
      ...(ok ? {} : { message: this.lastProblem ?? "no run worker process is running" }),
      isolation: this.isolation,
      ...(this.isolation === "namespace" ? { pid_namespace: this.pidNamespace } : {}),
      scheduling: this.scheduling,
      workers: live.length,
      ready,
      running,
      replaced: this.replaced,
      database_readable: this.databaseReadable,
      browser: this.browser && "path" in this.browser ? this.browser.path : null,
      ...(this.browser && "problem" in this.browser ? { browser_problem: this.browser.problem } : {}),
    };
  }

  /** The worker processes' ids (for health checks and tests). */
  pids(): number[] {
    return this.workers.filter((w) => w.killedFor === null).map((w) => w.pid);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const all = [...this.workers];
    for (const w of all) {
      for (const run of [...w.runs.values()]) this.settle(run, abortedResult("shutdown", run.timeoutMs, run));
      try {
        // The worker closes its browser and exits when its channel closes.
        w.proc.disconnect();
      } catch {}
    }
    await Promise.race([Promise.all(all.map((w) => w.proc.exited)), Bun.sleep(3_000)]);
    for (const w of all) if (w.proc.exitCode === null && w.proc.signalCode === null) killTree(w.pid);
    rmSync(this.home, { recursive: true, force: true });
  }
}
