// Structured JSON logs on stderr, one line per event. Secrets never reach it: callers pass no headers or bodies.
// Lines are batched (flushed within 15 ms, at once for errors, and at exit) so that logging every request does
// not cost a write system call per request.
export type Level = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const FLUSH_MS = 15;
const FLUSH_BYTES = 64 * 1024;

let threshold: number = ORDER.info;
let pending = "";
let timer: ReturnType<typeof setTimeout> | null = null;

export function setLogLevel(level: Level): void {
  threshold = ORDER[level];
}

export function logEnabled(level: Exclude<Level, "silent">): boolean {
  return ORDER[level] >= threshold;
}

export function flushLogs(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  if (pending === "") return;
  const out = pending;
  pending = "";
  process.stderr.write(out);
}

process.on("exit", flushLogs);

/** The current time as ISO 8601, formatted once per millisecond (busy servers log many lines per ms). */
let isoMs = 0;
let isoText = "";
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

function write(level: Exclude<Level, "silent">, msg: string, fields: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  const rest = JSON.stringify(fields);
  pending += `{"time":"${isoNow()}","level":"${level}","msg":${JSON.stringify(msg)}${rest === "{}" ? "}" : `,${rest.slice(1)}`}\n`;
  if (level === "error" || pending.length >= FLUSH_BYTES) flushLogs();
  else if (!timer) {
    timer = setTimeout(flushLogs, FLUSH_MS);
    timer.unref?.();
  }
}

export const log = {
  debug: (msg: string, fields: Record<string, unknown> = {}) => write("debug", msg, fields),
  info: (msg: string, fields: Record<string, unknown> = {}) => write("info", msg, fields),
  warn: (msg: string, fields: Record<string, unknown> = {}) => write("warn", msg, fields),
  error: (msg: string, fields: Record<string, unknown> = {}) => write("error", msg, fields),
};
