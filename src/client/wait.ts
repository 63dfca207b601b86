// wait_for_run, wait_for_generation (and group runs): poll the reading route until a terminal state, politely.
import { type Operation, ops } from "../manifest/index";
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
}

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

export async function pollUntil<T>(
  client: ApiClient,
  read: () => Promise<T>,
  isDone: (record: T) => boolean,
  opts: WaitOptions<T> = {},
): Promise<WaitResult<T>> {
  const sleep = opts.sleep ?? ((ms: number) => Bun.sleep(ms));
  const maxInterval = opts.maxIntervalMs ?? 5000;
  let interval = opts.firstIntervalMs ?? 1000;
  const deadline = opts.timeoutMs === null || opts.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + opts.timeoutMs;
  let polls = 0;
  for (;;) {
    const record = await read();
    polls++;
    await opts.onUpdate?.(record);
    if (isDone(record)) return { record, timedOut: false, polls };
    const left = deadline - Date.now();
    if (left <= 0 || opts.signal?.aborted) return { record, timedOut: true, polls };
    await sleep(Math.min(politeInterval(interval, maxInterval, client.lastRateLimit), left));
    interval = Math.min(Math.round(interval * 1.5), maxInterval);
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
  const read = async () => {
    const res = await client.send(op, target, { signal: opts.signal });
    body = res.text ?? JSON.stringify(res.json);
    return res.json as T;
  };
  const result = await pollUntil(client, read, isDone, opts);
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
