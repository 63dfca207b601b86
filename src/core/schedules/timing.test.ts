// Due times as functions of the schedule and a moment: no waiting on the clock.
import { describe, expect, test } from "bun:test";
import { cronProblem, nextDue, nextDueTimes, timeZoneProblem } from "./timing";

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
