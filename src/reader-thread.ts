// What members hand in to be read is read in a thread of its own (reader-worker.ts), one request at a time; the
// API's thread only waits for the answer. A read that takes too long (it should not: documents and pages are capped
// in size and depth) is abandoned with its thread, and the next request gets a fresh one.
import { lineFrom, type Parsed, type ReadResult } from "./core/apply/documents";
import type { PageOutline } from "./generation/crawl/page-outline";
import { log } from "./logging";
import { invalid } from "./manifest/errors";
import type { ReaderRequest } from "./reader-worker";

const READ_LIMIT_MS = 20_000;

type Answer = { id: number; result: unknown } | { id: number; failure: string };
interface Waiting {
  resolve(result: unknown): void;
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
 * Beside this file, from source and in the compiled executable alike: there every module is one bundle at the root
 * of its embedded files, and the worker, a second entry point, sits where it is below src/, that is at the root too.
 */
const workerUrl = () => new URL("./reader-worker.ts", import.meta.url).href;

function parserThread(): Worker {
  if (worker) return worker;
  const w = new Worker(workerUrl());
  // A server with nothing else to do may stop: the thread does not hold it.
  (w as unknown as { unref(): void }).unref();
  w.onmessage = (e: MessageEvent<Answer>) => {
    const p = waiting.get(e.data.id);
    if (!p) return;
    waiting.delete(e.data.id);
    if ("failure" in e.data) p.reject(new Error(`reading failed: ${e.data.failure}`));
    else p.resolve(e.data.result);
  };
  w.onerror = (e) => {
    log.error("the reader's thread failed; a new one takes its place", { error: e.message });
    stopWorker(w, new Error(`the reader's thread failed: ${e.message}`));
  };
  worker = w;
  return w;
}

/** Sends one request to the reader's thread and waits for its answer, or for READ_LIMIT_MS (then `tooSlow`). */
/** A request before it has its id (each kind's own fields). */
type Unsent = ReaderRequest extends infer R ? (R extends ReaderRequest ? Omit<R, "id"> : never) : never;

async function ask(request: Unsent, tooSlow: () => Error): Promise<unknown> {
  const id = ++lastId;
  const w = parserThread();
  return new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => {
      log.warn("a read took too long; the reader's thread is replaced", { kind: request.kind, limit_ms: READ_LIMIT_MS });
      stopWorker(w, tooSlow());
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
    w.postMessage({ ...request, id } as ReaderRequest);
  });
}

/** Reads every document off the API's thread, or throws one 400 listing every problem by file and line. */
export async function parseDocuments(documents: { path: string; text: string }[], defaultEnvironment: string | undefined): Promise<Parsed[]> {
  const result = (await ask({ kind: "documents", documents, defaultEnvironment }, () =>
    invalid(`the documents took longer than ${READ_LIMIT_MS / 1000} s to read: apply smaller files`, [{ path: "body.documents", message: "too slow to read" }]),
  )) as ReadResult;
  if ("problems" in result) throw invalid(result.message, result.problems);
  return result.parsed.map((p) => ({ ...p, line: lineFrom(p.lines) }));
}

/** A crawled page's outline, read off the API's thread. */
export async function readPageOutline(html: string, url: string): Promise<PageOutline> {
  return (await ask({ kind: "outline", html, url }, () => new Error(`the page ${url} took longer than ${READ_LIMIT_MS / 1000} s to read`))) as PageOutline;
}
