// Due times as functions of the schedule and a moment: no waiting on the clock.
import { describe, expect, test } from "bun:test";
import { canonicalTimeZone, cronProblem, nextDue, nextDueTimes, timeZoneProblem } from "./timing";

const cron = (expr: string, timezone = "UTC") => ({ cron: expr, timezone, interval_seconds: null });
const iso = (d: Date | null) => d?.toISOString() ?? null;
const EPOCH = new Date(0);

describe("cron", () => {
  test("5 fields, valid values, a time zone the server knows", () => {
    expect(cronProblem("*/15 * * * 1-5")).toBeNull();
    expect(cronProblem("* * * *")).toContain("5 fields");
    expect(cronProblem("0 0 * * * *")).toContain("5 fields");
    expect(cronProblem("61 * * * *")).toContain("minute");
    expect(cronProblem("0 0 31 2 *")).toContain("never");
    expect(timeZoneProblem("Europe/Berlin")).toBeNull();
    expect(timeZoneProblem("Mars/Olympus")).toContain("IANA");
  });

  test("a value out of its field's range is named as written, with the range allowed", () => {
    expect(cronProblem("0 0 32 * *")).toBe("not a valid cron expression: day-of-month 32 is out of range (allowed 1-31)");
    expect(cronProblem("0 0 0 * *")).toBe("not a valid cron expression: day-of-month 0 is out of range (allowed 1-31)");
    expect(cronProblem("0 0 * 13 *")).toBe("not a valid cron expression: month 13 is out of range (allowed 1-12)");
    expect(cronProblem("0 0 * 0 *")).toBe("not a valid cron expression: month 0 is out of range (allowed 1-12)");
    expect(cronProblem("0 0 1-32 * *")).toContain("day-of-month 32 is out of range (allowed 1-31)");
    // A range whose step never reaches its end is still read as written.
    expect(cronProblem("0 0 * 2-13/2 *")).toContain("month 13 is out of range (allowed 1-12)");
    expect(cronProblem("0 24 * * *")).toContain("hour 24 is out of range (allowed 0-23)");
    expect(cronProblem("0 0 * * 8")).toContain("day-of-week 8 is out of range (allowed 0-7)");
    // Steps and nth weekdays are counts, not values of the field.
    expect(cronProblem("*/45 0 1 */2 1#3")).toBeNull();
    expect(cronProblem("0 0 * * 7")).toBeNull();
  });

  test("time zones are IANA names (or UTC), in their canonical spelling; offsets are refused", () => {
    expect(canonicalTimeZone("europe/berlin")).toBe("Europe/Berlin");
    expect(canonicalTimeZone("AMERICA/NEW_YORK")).toBe("America/New_York");
    expect(canonicalTimeZone("utc")).toBe("UTC");
    expect(canonicalTimeZone("UTC")).toBe("UTC");
    for (const offset of ["+02:00", "-0530", "+02", "-05:30"]) {
      expect(canonicalTimeZone(offset)).toBeNull();
      expect(timeZoneProblem(offset)).toContain("IANA");
    }
    expect(canonicalTimeZone("Mars/Olympus")).toBeNull();
  });

  test("the next due time is strictly after the moment, in the schedule's time zone", () => {
    expect(iso(nextDue(cron("*/15 * * * *"), new Date("2026-05-04T10:15:00Z"), EPOCH))).toBe("2026-05-04T10:30:00.000Z");
    expect(iso(nextDue(cron("0 9 * * 1-5", "America/New_York"), new Date("2026-05-08T14:00:00Z"), EPOCH))).toBe("2026-05-11T13:00:00.000Z");
  });

  test("spring forward: a time the clock skips runs once, right after the change", () => {
    // 2026-03-29 in Berlin: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist that day.
    const times = nextDueTimes(cron("30 2 * * *", "Europe/Berlin"), new Date("2026-03-28T00:00:00Z"), EPOCH, 3).map(iso);
    expect(times).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
  });

  test("fall back: a fixed time in the repeated hour runs once", () => {
    // 2026-10-25 in Berlin: 03:00 CEST goes back to 02:00 CET, so 02:30 happens twice.
    const times = nextDueTimes(cron("30 2 * * *", "Europe/Berlin"), new Date("2026-10-24T00:00:00Z"), EPOCH, 3).map(iso);
    expect(times).toEqual(["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  // Fixed times of day given as a list or a range follow the same rule as a single time.
  test("spring forward with a minute list: the skipped times run once, right after the change, that day", () => {
    // 2027-03-28 in Berlin: 02:00 CET jumps to 03:00 CEST (01:00Z): 02:00 and 02:30 do not exist that day.
    const berlin = nextDueTimes(cron("0,30 2 28 3 *", "Europe/Berlin"), new Date("2027-03-27T00:00:00Z"), EPOCH, 3).map(iso);
    expect(berlin).toEqual(["2027-03-28T01:00:00.000Z", "2028-03-28T00:00:00.000Z", "2028-03-28T00:30:00.000Z"]);
    // 2027-03-14 in New York: 02:00 EST jumps to 03:00 EDT (07:00Z).
    const newYork = nextDueTimes(cron("0,30 2 14 3 *", "America/New_York"), new Date("2027-03-13T00:00:00Z"), EPOCH, 2).map(iso);
    expect(newYork).toEqual(["2027-03-14T07:00:00.000Z", "2028-03-14T06:00:00.000Z"]);
    // A range too: 01:30 and 03:30 as usual, 02:30 at the change.
    const range = nextDueTimes(cron("30 1-3 28 3 *", "Europe/Berlin"), new Date("2027-03-27T12:00:00Z"), EPOCH, 3).map(iso);
    expect(range).toEqual(["2027-03-28T00:30:00.000Z", "2027-03-28T01:00:00.000Z", "2027-03-28T01:30:00.000Z"]);
  });

  test("fall back with a minute list: each fixed time in the repeated hour runs once", () => {
    // 2027-10-31 in Berlin: 03:00 CEST goes back to 02:00 CET (01:00Z): 02:00 and 02:30 happen twice.
    const berlin = nextDueTimes(cron("0,30 2 31 10 *", "Europe/Berlin"), new Date("2027-10-30T00:00:00Z"), EPOCH, 3).map(iso);
    expect(berlin).toEqual(["2027-10-31T00:00:00.000Z", "2027-10-31T00:30:00.000Z", "2028-10-31T01:00:00.000Z"]);
    // 2027-11-07 in New York: 02:00 EDT goes back to 01:00 EST (06:00Z): 01:15 and 01:45 happen twice.
    const newYork = nextDueTimes(cron("15,45 1 7 11 *", "America/New_York"), new Date("2027-11-06T00:00:00Z"), EPOCH, 3).map(iso);
    expect(newYork).toEqual(["2027-11-07T05:15:00.000Z", "2027-11-07T05:45:00.000Z", "2028-11-07T06:15:00.000Z"]);
    // Asked from within the second pass (02:10 CET, after 02:00 CET), the times already run are not run again.
    expect(iso(nextDue(cron("0,30 2 31 10 *", "Europe/Berlin"), new Date("2027-10-31T01:10:00Z"), EPOCH))).toBe("2028-10-31T01:00:00.000Z");
    const range = nextDueTimes(cron("30 1-3 31 10 *", "Europe/Berlin"), new Date("2027-10-30T12:00:00Z"), EPOCH, 3).map(iso);
    expect(range).toEqual(["2027-10-30T23:30:00.000Z", "2027-10-31T00:30:00.000Z", "2027-10-31T02:30:00.000Z"]);
  });

  test("an expression with * or a step in minute or hour keeps to the clock: every 30 minutes through both passes of the repeated hour", () => {
    const times = nextDueTimes(cron("*/30 * 31 10 *", "Europe/Berlin"), new Date("2027-10-31T00:00:00Z"), EPOCH, 4).map(iso);
    expect(times).toEqual(["2027-10-31T00:30:00.000Z", "2027-10-31T01:00:00.000Z", "2027-10-31T01:30:00.000Z", "2027-10-31T02:00:00.000Z"]);
    const hourly = nextDueTimes(cron("0 * 28 3 *", "Europe/Berlin"), new Date("2027-03-27T23:30:00Z"), EPOCH, 3).map(iso);
    expect(hourly).toEqual(["2027-03-28T00:00:00.000Z", "2027-03-28T01:00:00.000Z", "2027-03-28T02:00:00.000Z"]);
  });
});

describe("intervals", () => {
  const every10 = { cron: null, timezone: null, interval_seconds: 10 };
  const anchor = new Date("2026-01-01T00:00:00Z");

  test("due every interval from the anchor, strictly after the moment", () => {
    expect(iso(nextDue(every10, anchor, anchor))).toBe("2026-01-01T00:00:10.000Z");
    expect(iso(nextDue(every10, new Date("2026-01-01T00:00:25Z"), anchor))).toBe("2026-01-01T00:00:30.000Z");
    expect(iso(nextDue(every10, new Date("2025-12-31T23:00:00Z"), anchor))).toBe("2026-01-01T00:00:00.000Z");
  });

  test("after downtime, the next due time is the first one after now: missed ticks are skipped, the phase kept", () => {
    const anHourLater = new Date("2026-01-01T01:00:03Z");
    expect(iso(nextDue(every10, anHourLater, anchor))).toBe("2026-01-01T01:00:10.000Z");
  });
});
