// The JUnit report of a group run still going: its finished runs as they ended, its unfinished runs skipped.
import { expect, test } from "bun:test";
import { groupRunJunit, runJunit } from "./junit";

const run = (id: string, automation_name: string, status: string, duration_ms: number | null) => ({
  id,
  automation_name,
  status,
  duration_ms,
  error: null,
  finished_at: null,
  created_at: "2026-01-01T00:00:00.000Z",
});

test("a group run still going: the passed run passes, the running and queued ones are skipped with their run id", () => {
  const xml = groupRunJunit({
    id: "grn_1",
    group_name: "nightly",
    created_at: "2026-01-01T00:00:00.000Z",
    runs: [run("run_a", "passing", "passed", 12), run("run_b", "held", "running", null), run("run_c", "later", "queued", null)],
  });
  expect(xml).toContain('<testsuite name="nightly" id="grn_1" tests="3" failures="0" errors="0" skipped="2" time="0.012"');
  expect(xml).toContain('<testcase name="passing" classname="nightly" time="0.012"></testcase>');
  expect(xml).toContain(
    '<testcase name="held" classname="nightly" time="0.000"><skipped message="still running when this report was made (run run_b)"/></testcase>',
  );
  expect(xml).toContain(
    '<testcase name="later" classname="nightly" time="0.000"><skipped message="still queued when this report was made (run run_c)"/></testcase>',
  );
});

test("a run's own report says the same while it runs; a cancelled run is skipped as cancelled, saying why", () => {
  expect(runJunit(run("run_b", "held", "running", null))).toContain('<skipped message="still running when this report was made (run run_b)"/>');
  expect(runJunit(run("run_d", "stopped", "cancelled", 5))).toContain(
    '<testcase name="stopped" classname="stopped" time="0.005"><skipped message="cancelled"/></testcase>',
  );
  const notRun = { ...run("run_e", "later", "cancelled", null), error: "not run: an earlier run of the sequential group run did not pass (stop_on_failure)" };
  expect(runJunit(notRun)).toContain('<skipped message="cancelled: not run: an earlier run of the sequential group run did not pass (stop_on_failure)"/>');
});
