import { expect, test } from "bun:test";
import { ops } from "../src/manifest";
import { groupCounts, runText, summarize } from "./results";

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

test("a cancelled or timed-out run's text says where it was stopped, not that a step failed", () => {
  const run = (status: string) =>
    ({
      id: "run_x",
      automation_name: "slow",
      status,
      flaky: false,
      duration_ms: 1000,
      attempts: 1,
      error: null,
      summary: { steps: 3, passed: 1, failed: 1, skipped: 1 },
      steps: [],
    }) as unknown as Parameters<typeof runText>[0];
  expect(runText(run("cancelled"))).toStartWith("run run_x (slow): cancelled; 1/3 steps passed, stopped at step 2, 1 skipped");
  expect(runText(run("failed"))).toStartWith("run run_x (slow): failed; 1/3 steps passed, 1 failed, 1 skipped");
});
