// What crosses the boundary between the server (or a remote runner) and its worker processes. Messages travel as
// JSON in batches (an array per send): everything produced in the same turn of the event loop crosses in one message.
import type { Level } from "../logging";
import type { ExecutionSettings, JobProgress, JobResult, RunJob } from "./execute-run";
import type { RunAborted } from "./run-attempt";

/** A job as it travels: the snapshot as its stored text only (the worker parses it once per distinct text). */
export type WireJob = Omit<RunJob, "spec"> & { specReadable: boolean };

/** An outcome as it travels: the step results as their JSON, which is what the server records. */
export type WireResult = Omit<JobResult, "steps" | "resultsJson"> & { resultsJson: string };

/** The first message a worker receives. */
export interface WorkerInit {
  t: "init";
  browserPath: string | undefined;
  logLevel: Level;
  /** A path the worker must not be able to read (the data directory): it reports whether it can. */
  probePath: string | null;
}

export type ToWorker =
  | WorkerInit
  | { t: "run"; job: WireJob; settings: ExecutionSettings }
  | { t: "abort"; id: string; reason: RunAborted["reason"] }
  | { t: "saved"; id: string; seq: number; error: string | null };

export type FromWorker =
  | {
      t: "ready";
      pid: number;
      uid: number | null;
      probeReadable: boolean | null;
      env: string[];
      /** The Chromium this worker would start for a browser run (findChromium in its own environment). */
      browser: { path: string } | { problem: string };
    }
  | { t: "progress"; id: string; progress: JobProgress }
  | { t: "artifact"; id: string; seq: number; file: string; base64: string }
  | { t: "done"; id: string; result: WireResult };

/** The hidden subcommand of the compiled executable that starts a worker process. */
export const WORKER_COMMAND = "__run-worker";

/**
 * A sender that puts everything posted in the same turn of the event loop into one message: `defer` runs the send
 * when the turn is over (queueMicrotask, or setImmediate to let I/O in between), `send` gets the batch.
 */
export function batchedSender<T>(defer: (flush: () => void) => void, send: (batch: T[]) => void): (m: T) => void {
  let outbox: T[] = [];
  let flushing = false;
  return (m) => {
    outbox.push(m);
    if (flushing) return;
    flushing = true;
    defer(() => {
      flushing = false;
      const batch = outbox;
      outbox = [];
      send(batch);
    });
  };
}
