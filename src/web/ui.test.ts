import { describe, expect, test } from "bun:test";
import { ago } from "./ui";

describe("ago", () => {
  const now = Date.parse("2026-11-23T12:00:00Z");
  const before = (seconds: number) => new Date(now - seconds * 1000).toISOString();
  test("reads at a glance: just now, minutes, hours, days", () => {
    expect(ago(before(10), now)).toBe("just now");
    expect(ago(before(50), now)).toBe("1 min ago");
    expect(ago(before(5 * 60), now)).toBe("5 min ago");
    expect(ago(before(3 * 3600), now)).toBe("3 h ago");
    expect(ago(before(86_400), now)).toBe("1 day ago");
    expect(ago(before(2 * 86_400), now)).toBe("2 days ago");
  });
  test("a week or more shows the date; none shows a dash; a clock ahead is 'just now'", () => {
    expect(ago(before(30 * 86_400), now)).toContain("2026");
    expect(ago(null, now)).toBe("—");
    expect(ago(before(-30), now)).toBe("just now");
  });
});
