// Applied documents are read in a thread of their own (parse-worker.ts), one request at a time; the API's thread
// only waits for the answer. A read that takes too long (it should not: documents are capped in size and depth)
// is abandoned with its thread, and the next request gets a fresh one.
import { log } from "../../logging";
import { invalid } from "../../manifest/errors";
import { lineFrom, type Parsed, type ReadResult } from "./documents";
import type { ParseRequest } from "./parse-worker";

const READ_LIMIT_MS = 20_000;

type Answer = { id: number; result: ReadResult } | { id: number; failure: string };
interface Waiting {
  resolve(result: ReadResult): void;
  reject(e: Error): void;
}

let worker: Worker | null = null;
const waiting = new Map<number, Waiting>();
let lastId = 0;

function stopWorker(w: Worker, why: Error): void {
  if (worker === w) worker = null;
  w.terminate();
  for (const [id, p] of waiting) {
    waiting.delete(id);
    p.reject(why);
  }
}

/**
 * Beside this file from source; in the compiled executable every module is one bundle at the root of its embedded
 * files, and the worker, a second entry point, sits where it is below src/.
 */
const workerUrl = () =>
  process.env.SVC_COMPILED === "1" ? new URL("./core/apply/parse-worker.ts", import.meta.url).href : new URL("./parse-worker.ts", import.meta.url).href;

function parserThread(): Worker {
  if (worker) return worker;
  const w = new Worker(workerUrl());
  // A server with nothing else to do may stop: the thread does not hold it.
  (w as unknown as { unref(): void }).unref();
  w.onmessage = (e: MessageEvent<Answer>) => {
    const p = waiting.get(e.data.id);
    if (!p) return;
    waiting.delete(e.data.id);
    if ("failure" in e.data) p.reject(new Error(`reading the documents failed: ${e.data.failure}`));
    else p.resolve(e.data.result);
  };
  w.onerror = (e) => {
    log.error("the document reader's thread failed; a new one takes its place", { error: e.message });
    stopWorker(w, new Error(`the document reader's thread failed: ${e.message}`));
  };
  worker = w;
  return w;
}

/** Reads every document off the API's thread, or throws one 400 listing every problem by file and line. */
export async function parseDocuments(documents: { path: string; text: string }[], defaultEnvironment: string | undefined): Promise<Parsed[]> {
  const id = ++lastId;
  const w = parserThread();
  const result = await new Promise<ReadResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      log.warn("reading applied documents took too long; the reader's thread is replaced", { documents: documents.length, limit_ms: READ_LIMIT_MS });
      stopWorker(
        w,
        invalid(`the documents took longer than ${READ_LIMIT_MS / 1000} s to read: apply smaller files`, [
          { path: "body.documents", message: "too slow to read" },
        ]),
      );
    }, READ_LIMIT_MS);
    waiting.set(id, {
      resolve: (r) => {
        clearTimeout(timer);
        resolve(r);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
    const request: ParseRequest = { id, documents, defaultEnvironment };
    w.postMessage(request);
  });
  if ("problems" in result) throw invalid(result.message, result.problems);
  return result.parsed.map((p) => ({ ...p, line: lineFrom(p.lines) }));
}
