import { expect, test } from "bun:test";
import { ops } from "../src/manifest";
import { groupCounts, summarize } from "./results";

test("a history's text says its counts in words, not an empty sentence", () => {
  const history = { days: 7, runs: 13, passed: 9, failed: 4, pass_rate: 9 / 13, p50_ms: 41.6, p95_ms: 90, daily: [] };
  expect(summarize(ops.getAutomationHistory, history)).toBe("get_automation_history: 13 finished runs in the last 7 days, 69.2% passed, median 42 ms.");
  expect(summarize(ops.getProjectHistory, { ...history, runs: 0, pass_rate: null, p50_ms: null })).toBe(
    "get_project_history: 0 finished runs in the last 7 days.",
  );
});

test("a group run's counts name its cancelled runs", () => {
  const s = { total: 3, queued: 0, running: 0, passed: 1, flaky: 0, failed: 0, error: 0, timed_out: 0, cancelled: 2, quarantined: 0 };
  expect(groupCounts(s)).toBe("1 of 3 runs passed, 0 failed, 0 error, 0 timed out, 2 cancelled");
});
