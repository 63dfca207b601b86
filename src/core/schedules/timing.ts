// When a schedule is due: cron expressions (5 fields, read in an IANA time zone) or a fixed interval. Pure
// functions of the schedule and a moment. Daylight-saving changes follow cron's (Vixie cron's) rule, which croner
// applies with fixedTimeRule "no-wildcard": an expression whose minute and hour fields hold no `*` and no step (a
// time, a list or a range of times) names fixed times of day — one the spring change skips runs right after the
// change, one the autumn change repeats runs once; an expression with `*` or a step there keeps to the clock.
import { Cron } from "croner";

export interface Timing {
  cron: string | null;
  timezone: string | null;
  interval_seconds: number | null;
}

function cronOf(expr: string, timezone: string | null): Cron {
  return new Cron(expr, { timezone: timezone ?? "UTC", paused: true, mode: "5-part", legacyMode: true, fixedTimeRule: "no-wildcard" });
}

/** The fields of a 5-field expression, in order, with the values each allows. */
const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day-of-month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day-of-week", min: 0, max: 7 },
] as const;

/**
 * A number out of its field's range, said as written: croner counts day-of-month and month from 0 inside and
 * names the value it computed ("day: 31" for a given 32), and lets a range end past the last value through when
 * its step does not reach it ("2-13/2").
 */
function valueOutOfRange(fields: string[]): string | null {
  for (const [i, field] of fields.entries()) {
    const spec = FIELDS[i];
    if (!spec) continue;
    for (const item of field.split(",")) {
      // The step (after /) and the nth weekday (after #) are counts, not values of the field.
      const values = (item.split("/")[0] ?? "").split("#")[0] ?? "";
      for (const digits of values.match(/\d+/g) ?? []) {
        const n = Number(digits);
        if (n < spec.min || n > spec.max) return `${spec.name} ${digits} is out of range (allowed ${spec.min}-${spec.max})`;
      }
    }
  }
  return null;
}

/** Why a cron expression cannot be used, or null. */
export function cronProblem(expr: string): string | null {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) return "a cron expression has exactly 5 fields: minute hour day-of-month month day-of-week";
  const outOfRange = valueOutOfRange(fields);
  if (outOfRange) return `not a valid cron expression: ${outOfRange}`;
  try {
    const next = cronOf(expr, "UTC").nextRun(new Date());
    if (next === null) return "the cron expression is never due";
    return null;
  } catch (e) {
    return `not a valid cron expression: ${(e as Error).message.replace(/^CronPattern:\s*/, "")}`;
  }
}

/**
 * The time zone's canonical spelling (`Europe/Berlin` for `europe/berlin`, `UTC` for `utc`), or null when it is not
 * an IANA name the server knows. UTC offsets (`+02:00`, `-0530`), which Intl also takes, are refused: an offset
 * knows no daylight saving, and the schedule would silently drift from the place it was meant for.
 */
export function canonicalTimeZone(tz: string): string | null {
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  return /^[A-Za-z]/.test(resolved) ? resolved : null;
}

/** Why a time zone name cannot be used (it must be an IANA name the server knows, or UTC), or null. */
export function timeZoneProblem(tz: string): string | null {
  return canonicalTimeZone(tz) === null ? `unknown time zone "${tz}": give an IANA name such as Europe/Berlin, or UTC (not an offset)` : null;
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
