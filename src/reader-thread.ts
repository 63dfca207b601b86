// What members hand in to be read is read in a thread of its own (reader-worker.ts); the API's thread only waits
// for the answer. The thread reads one request at a time, taken in turns across the workspaces that asked (then
// in order), so one workspace's large folders never hold another's for more than one read. A read that takes too
// long (it should not: documents and pages are capped in size and depth) is abandoned with its thread, and the next
// request gets a fresh one.
import { lineFrom, type Parsed, type ReadResult, type Unread } from "./core/apply/documents";
import type { PageOutline } from "./generation/crawl/page-outline";
import { log } from "./logging";
import { type ErrorDetail, invalid } from "./manifest/errors";
import type { ReaderRequest } from "./reader-worker";

const READ_LIMIT_MS = 20_000;

/** A request before it has its id (each kind's own fields). */
type Unsent = ReaderRequest extends infer R ? (R extends ReaderRequest ? Omit<R, "id"> : never) : never;
type Answer = { id: number; result: unknown } | { id: number; failure: string };

interface Pending {
  request: Unsent;
  tooSlow: () => Error;
  resolve(result: unknown): void;
  reject(e: Error): void;
}

/** Waiting requests by whose they are (a workspace), in the order they came. */
const queues = new Map<string, Pending[]>();
/** When each owner was last served (a count of reads): the one served longest ago (or never) goes next. */
const lastServed = new Map<string, number>();
let served = 0;
let inFlight: { id: number; pending: Pending; timer: ReturnType<typeof setTimeout> } | null = null;
let worker: Worker | null = null;
let lastId = 0;

/**
 * Beside this file, from source and in the compiled executable alike: there every module is one bundle at the root
 * of its embedded files, and the worker, a second entry point, sits where it is below src/, that is at the root too.
 */
const workerUrl = () => new URL("./reader-worker.ts", import.meta.url).href;

/** The thread is replaced: what it was reading fails with `why`; the next request gets a fresh one. */
function dropWorker(w: Worker, why: Error): void {
  if (worker === w) worker = null;
  w.terminate();
  const current = inFlight;
  if (current) {
    clearTimeout(current.timer);
    inFlight = null;
    current.pending.reject(why);
  }
  dispatch();
}

function readerThread(): Worker {
  if (worker) return worker;
  const w = new Worker(workerUrl());
  // A server with nothing else to do may stop: the thread does not hold it.
  (w as unknown as { unref(): void }).unref();
  w.onmessage = (e: MessageEvent<Answer>) => {
    const current = inFlight;
    if (!current || current.id !== e.data.id) return;
    clearTimeout(current.timer);
    inFlight = null;
    if ("failure" in e.data) current.pending.reject(new Error(`reading failed: ${e.data.failure}`));
    else current.pending.resolve(e.data.result);
    dispatch();
  };
  w.onerror = (e) => {
    log.error("the reader's thread failed; a new one takes its place", { error: e.message });
    dropWorker(w, new Error(`the reader's thread failed: ${e.message}`));
  };
  worker = w;
  return w;
}

/** Sends the next request, in turns: of the workspace served longest ago (or never), its oldest request. */
function dispatch(): void {
  if (inFlight) return;
  let owner: string | null = null;
  for (const candidate of queues.keys()) if (owner === null || (lastServed.get(candidate) ?? -1) < (lastServed.get(owner) ?? -1)) owner = candidate;
  if (owner === null) return;
  const line = queues.get(owner) as Pending[];
  const pending = line.shift() as Pending;
  if (line.length === 0) queues.delete(owner);
  lastServed.set(owner, ++served);
  // Who has not asked for a while needs no memory of it: never served reads the same.
  if (lastServed.size > 1000) for (const k of lastServed.keys()) if (!queues.has(k) && k !== owner) lastServed.delete(k);
  const id = ++lastId;
  const w = readerThread();
  const timer = setTimeout(() => {
    log.warn("a read took too long; the reader's thread is replaced", { kind: pending.request.kind, limit_ms: READ_LIMIT_MS });
    dropWorker(w, pending.tooSlow());
  }, READ_LIMIT_MS);
  inFlight = { id, pending, timer };
  w.postMessage({ ...pending.request, id } as ReaderRequest);
}

/** Reads `request` in the reader's thread, in `owner`'s turn; waits for the answer, or for READ_LIMIT_MS (then `tooSlow`). */
function ask(request: Unsent, owner: string, tooSlow: () => Error): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    const line = queues.get(owner);
    const pending: Pending = { request, tooSlow, resolve, reject };
    if (line) line.push(pending);
    else queues.set(owner, [pending]);
    dispatch();
  });
}

/** Reads every document off the API's thread (in `owner`'s turn), or throws one 400 listing every problem by file and line. */
export async function parseDocuments(documents: { path: string; text: string }[], defaultEnvironment: string | undefined, owner: string): Promise<Parsed[]> {
  const read = await readAllDocuments(documents, defaultEnvironment, owner);
  if (read.problems.length > 0) throw invalid(read.message, read.problems);
  return read.parsed;
}

/**
 * Reads every document off the API's thread (in `owner`'s turn): those that could be read, and the problems of the
 * others with what they say of themselves (apply checks the first against each other and the project, and tells
 * every problem at once).
 */
export async function readAllDocuments(
  documents: { path: string; text: string }[],
  defaultEnvironment: string | undefined,
  owner: string,
): Promise<{ parsed: Parsed[]; problems: ErrorDetail[]; message: string; unread: Unread[] }> {
  const result = (await ask({ kind: "documents", documents, defaultEnvironment }, owner, () =>
    invalid(`the documents took longer than ${READ_LIMIT_MS / 1000} s to read: apply smaller files`, [{ path: "body.documents", message: "too slow to read" }]),
  )) as ReadResult;
  const withLines = (read: Omit<Parsed, "line">[]) => read.map((p) => ({ ...p, line: lineFrom(p.lines) }) as Parsed);
  if ("problems" in result) return { parsed: withLines(result.read), problems: result.problems, message: result.message, unread: result.unread };
  return { parsed: withLines(result.parsed), problems: [], message: "", unread: [] };
}

/** A crawled page's outline, read off the API's thread (in `owner`'s turn). */
export async function readPageOutline(html: string, url: string, owner: string): Promise<PageOutline> {
  return (await ask(
    { kind: "outline", html, url },
    owner,
    () => new Error(`the page ${url} took longer than ${READ_LIMIT_MS / 1000} s to read`),
  )) as PageOutline;
}
