// wait_for_run, wait_for_generation (and group runs): long-poll the reading route (`?wait=N`) until a terminal
// state; a server that answers without waiting is polled politely instead.
import { MAX_WAIT_SECONDS, type Operation } from "../manifest/define";
import { ops } from "../manifest/index";
import { TERMINAL_GENERATION_STATUSES, TERMINAL_RUN_STATUSES } from "../manifest/records";
import type { ApiClient, OpOutput, RateLimitState } from "./api-client";

export type RunRecord = OpOutput<"getRun">;
export type GenerationRecord = OpOutput<"getGeneration">;
export type GroupRunRecord = OpOutput<"getGroupRun">;

export interface WaitOptions<T> {
  /** Overall limit in ms; null or undefined waits until the record is terminal. */
  timeoutMs?: number | null;
  /** Called after every poll (also the first), e.g. to draw progress. */
  onUpdate?: (record: T) => void | Promise<void>;
  signal?: AbortSignal;
  firstIntervalMs?: number;
  maxIntervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * Each read asks the server to wait up to this many seconds for the end (at most MAX_WAIT_SECONDS); a shorter
   * one shows progress more often. 0 polls without waiting on the server.
   */
  longPollSeconds?: number;
  /** The first read answers at once (the state now, for a first progress report); later ones long-poll. */
  firstReadAtOnce?: boolean;
}

/** How long each read of a wait asks the server to hold it, unless the caller says otherwise. */
export const DEFAULT_LONG_POLL_SECONDS = 10;
/** A long-poll answered sooner than its wait less this, without the end, was not held: the server could not wait. */
const UNHELD_MARGIN_MS = 250;

export interface WaitResult<T> {
  record: T;
  timedOut: boolean;
  polls: number;
}

/** With few requests left in the bucket, poll no faster than the bucket refills (spread over the rest). */
export function politeInterval(intervalMs: number, maxIntervalMs: number, rl: RateLimitState | null): number {
  if (!rl) return intervalMs;
  const lowWater = Math.max(5, Math.floor(rl.limit * 0.1));
  if (rl.remaining >= lowWater) return intervalMs;
  const used = rl.limit - rl.remaining;
  const perTokenMs = used > 0 ? (rl.resetSeconds * 1000) / used : 0;
  return Math.max(maxIntervalMs, Math.min(Math.ceil(perTokenMs * 2), 60_000));
}

/**
 * Reads until `isDone`. `read(waitSeconds)` asks the server to hold the read that long for the end (a long-poll):
 * an answer after the whole wait is read again at once; one that came back sooner without the end (a server past
 * its bound of waiting reads, stopping, or too old to wait) is followed by the polite polling schedule.
 */
export async function pollUntil<T>(
  client: ApiClient,
  read: (waitSeconds: number) => Promise<T>,
  isDone: (record: T) => boolean,
  opts: WaitOptions<T> = {},
): Promise<WaitResult<T>> {
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  const maxInterval = opts.maxIntervalMs ?? 5000;
  const longPoll = Math.max(0, Math.min(opts.longPollSeconds ?? 0, MAX_WAIT_SECONDS));
  let interval = opts.firstIntervalMs ?? 1000;
  const deadline = opts.timeoutMs === null || opts.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + opts.timeoutMs;
  let polls = 0;
  for (;;) {
    const atOnce = polls === 0 && opts.firstReadAtOnce === true;
    const waitSeconds = longPoll > 0 && !atOnce ? Math.min(longPoll, Math.floor(Math.max(0, deadline - Date.now()) / 1000)) : 0;
    const asked = performance.now();
    const record = await read(waitSeconds);
    // The first read, asked not to wait, is followed at once by one that does; under a second left, reads poll.
    const held = waitSeconds > 0 ? performance.now() - asked >= waitSeconds * 1000 - UNHELD_MARGIN_MS : atOnce && longPoll > 0;
    polls++;
    await opts.onUpdate?.(record);
    if (isDone(record)) return { record, timedOut: false, polls };
    const left = deadline - Date.now();
    if (left <= 0 || opts.signal?.aborted) return { record, timedOut: true, polls };
    if (!held) {
      await sleep(Math.min(politeInterval(interval, maxInterval, client.lastRateLimit), left));
      interval = Math.min(Math.round(interval * 1.5), maxInterval);
    }
  }
}

const runDone = (r: { status: string }) => (TERMINAL_RUN_STATUSES as readonly string[]).includes(r.status);
const generationDone = (g: { status: string }) => (TERMINAL_GENERATION_STATUSES as readonly string[]).includes(g.status);

/** A wait for one API record: also the final record's JSON exactly as the server sent it (for `--json`). */
export interface RecordWaitResult<T> extends WaitResult<T> {
  body: string;
}

async function waitForRecord<T extends { status: string }>(
  client: ApiClient,
  op: Operation,
  target: Record<string, unknown>,
  isDone: (r: T) => boolean,
  opts: WaitOptions<T>,
): Promise<RecordWaitResult<T>> {
  let body = "";
  const read = async (wait: number) => {
    const res = await client.send(op, wait > 0 ? { ...target, wait } : target, { signal: opts.signal });
    body = res.text ?? JSON.stringify(res.json);
    return res.json as T;
  };
  const result = await pollUntil(client, read, isDone, { longPollSeconds: DEFAULT_LONG_POLL_SECONDS, ...opts });
  return { ...result, body };
}

export function waitForRun(
  client: ApiClient,
  target: { project: string; runId: string },
  opts: WaitOptions<RunRecord> = {},
): Promise<RecordWaitResult<RunRecord>> {
  return waitForRecord(client, ops.getRun, target, runDone, opts);
}

export function waitForGeneration(
  client: ApiClient,
  target: { project: string; feature: string },
  opts: WaitOptions<GenerationRecord> = {},
): Promise<RecordWaitResult<GenerationRecord>> {
  return waitForRecord(client, ops.getGeneration, target, generationDone, opts);
}

export function waitForGroupRun(
  client: ApiClient,
  target: { project: string; groupRunId: string },
  opts: WaitOptions<GroupRunRecord> = {},
): Promise<RecordWaitResult<GroupRunRecord>> {
  return waitForRecord(client, ops.getGroupRun, target, runDone, opts);
}

export function isSuccessfulStatus(status: string): boolean {
  return status === "passed" || status === "succeeded";
}
