// When a schedule is due: cron expressions (5 fields, read in an IANA time zone, daylight-saving changes as cron
// handles them: a time skipped by the spring change runs right after it, a repeated hour of the autumn change
// runs a fixed-time job once) or a fixed interval. Pure functions of the schedule and a moment.
import { Cron } from "croner";

export interface Timing {
  cron: string | null;
  timezone: string | null;
  interval_seconds: number | null;
}

function cronOf(expr: string, timezone: string | null): Cron {
  return new Cron(expr, { timezone: timezone ?? "UTC", paused: true, mode: "5-part", legacyMode: true });
}

/** Why a cron expression (with its time zone) cannot be used, or null. */
export function cronProblem(expr: string): string | null {
  if (expr.trim().split(/\s+/).length !== 5) return "a cron expression has exactly 5 fields: minute hour day-of-month month day-of-week";
  try {
    const next = cronOf(expr, "UTC").nextRun(new Date());
    if (next === null) return "the cron expression is never due";
    return null;
  } catch (e) {
    return `not a valid cron expression: ${(e as Error).message.replace(/^CronPattern:\s*/, "")}`;
  }
}

/** Why a time zone name cannot be used (it must be an IANA name the server knows), or null. */
export function timeZoneProblem(tz: string): string | null {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    return `unknown time zone "${tz}": give an IANA name such as Europe/Berlin or UTC`;
  }
  return null;
}

/**
 * The first due time strictly after `after`. An interval schedule is due every `interval_seconds` counted from
 * `anchor` (when it was created or last changed), so a late tick does not shift the ones after it.
 */
export function nextDue(t: Timing, after: Date, anchor: Date): Date | null {
  if (t.cron !== null) return cronOf(t.cron, t.timezone).nextRun(after);
  if (t.interval_seconds === null) return null;
  const step = t.interval_seconds * 1000;
  const since = after.getTime() - anchor.getTime();
  const n = since < 0 ? 0 : Math.floor(since / step) + 1;
  return new Date(anchor.getTime() + n * step);
}

/** The next `count` due times strictly after `after`. */
export function nextDueTimes(t: Timing, after: Date, anchor: Date, count: number): Date[] {
  const out: Date[] = [];
  let at = after;
  for (let i = 0; i < count; i++) {
    const next = nextDue(t, at, anchor);
    if (next === null) break;
    out.push(next);
    at = next;
  }
  return out;
}
