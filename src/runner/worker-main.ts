// A worker process: executes the runs its parent sends it (executeRun, the same function as everywhere) and sends
// back their progress, screenshots and outcomes. It holds no database handle, gets no configuration but what the
// init message carries, and stops when its parent goes away (the IPC channel closes).
import { closeSync, openSync } from "node:fs";
import { readRunSpec } from "../core/shared/columns";
import { setLogLevel } from "../logging";
import { findChromium, SharedBrowser } from "./chromium";
import { type ExecutionSettings, executeRun, type JobProgress, type RunJob } from "./execute-run";
import { RunAborted } from "./run-attempt";
import { batchedSender, type FromWorker, type ToWorker, type WireJob } from "./worker-protocol";

/** Runs quicker than this send no progress: their outcome follows at once. */
const PROGRESS_AFTER_MS = 500;
const PROGRESS_EVERY_MS = 250;

interface Running {
  controller: AbortController;
  started: number;
  progress: JobProgress | null;
  progressTimer: ReturnType<typeof setTimeout> | null;
}

export function runWorker(): void {
  const send = process.send?.bind(process);
  if (!send) {
    process.stderr.write("svc: the run worker is started by svc serve or svc runner, not by hand\n");
    process.exit(2);
  }
  let browser = new SharedBrowser(undefined);
  const running = new Map<string, Running>();
  const saves = new Map<string, { resolve(): void; reject(e: Error): void }>();
  let seq = 0;
  const post = batchedSender<FromWorker>((flush) => setImmediate(flush), send);

  const start = (wire: WireJob, settings: ExecutionSettings) => {
    const { specReadable, ...rest } = wire;
    const job: RunJob = { ...rest, spec: specReadable ? readRunSpec(wire.specText) : null };
    const r: Running = { controller: new AbortController(), started: performance.now(), progress: null, progressTimer: null };
    running.set(job.id, r);
    const sendProgress = () => {
      r.progressTimer = null;
      if (r.progress && running.get(job.id) === r) post({ t: "progress", id: job.id, progress: r.progress });
      r.progress = null;
    };
    void executeRun(job, {
      signal: r.controller.signal,
      controller: r.controller,
      browser,
      settings,
      saveArtifact: (file, bytes) =>
        new Promise<void>((resolve, reject) => {
          const n = ++seq;
          saves.set(`${job.id}:${n}`, { resolve, reject });
          post({ t: "artifact", id: job.id, seq: n, file, base64: Buffer.from(bytes).toString("base64") });
        }),
      onProgress: (progress) => {
        r.progress = progress;
        if (r.progressTimer) return;
        const age = performance.now() - r.started;
        r.progressTimer = setTimeout(sendProgress, Math.max(PROGRESS_EVERY_MS, PROGRESS_AFTER_MS - age));
      },
    }).then((result) => {
      if (r.progressTimer) clearTimeout(r.progressTimer);
      running.delete(job.id);
      const { steps, resultsJson: _, ...rest } = result;
      post({ t: "done", id: job.id, result: { ...rest, resultsJson: JSON.stringify({ steps, artifacts: result.artifacts }) } });
    });
  };

  process.on("message", (batch: ToWorker[]) => {
    for (const m of batch) {
      if (m.t === "init") {
        setLogLevel(m.logLevel);
        browser = new SharedBrowser(m.browserPath);
        let probeReadable: boolean | null = null;
        if (m.probePath) {
          try {
            closeSync(openSync(m.probePath, "r"));
            probeReadable = true;
          } catch {
            probeReadable = false;
          }
        }
        post({
          t: "ready",
          pid: process.pid,
          uid: process.getuid?.() ?? null,
          probeReadable,
          env: Object.keys(process.env),
          browser: findChromium(m.browserPath),
        });
      } else if (m.t === "run") start(m.job, m.settings);
      else if (m.t === "abort") running.get(m.id)?.controller.abort(new RunAborted(m.reason));
      else if (m.t === "saved") {
        const key = `${m.id}:${m.seq}`;
        const waiting = saves.get(key);
        saves.delete(key);
        if (m.error === null) waiting?.resolve();
        else waiting?.reject(new Error(m.error));
      }
    }
  });
  // The parent is gone (it stopped, or was killed): nothing may outlive it.
  process.on("disconnect", () => {
    void browser.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 1000).unref();
  });
  // Ctrl-C in a terminal reaches the whole process group: the parent decides when its workers stop.
  process.on("SIGINT", () => undefined);
}

if (import.meta.main) runWorker();
