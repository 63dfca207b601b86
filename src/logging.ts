// Structured JSON logs on stderr, one line per event. Secrets never reach it: callers pass no headers or bodies.
type Level = "debug" | "info" | "warn" | "error" | "silent";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

let threshold: number = ORDER.info;

export function setLogLevel(level: Level): void {
  threshold = ORDER[level];
}

function write(level: Exclude<Level, "silent">, msg: string, fields: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return;
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
}

export const log = {
  debug: (msg: string, fields: Record<string, unknown> = {}) => write("debug", msg, fields),
  info: (msg: string, fields: Record<string, unknown> = {}) => write("info", msg, fields),
  warn: (msg: string, fields: Record<string, unknown> = {}) => write("warn", msg, fields),
  error: (msg: string, fields: Record<string, unknown> = {}) => write("error", msg, fields),
};
