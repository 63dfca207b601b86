// A queued run's snapshot of its automation (runs.spec): the steps as stored, checked and written as JSON once per
// distinct text, and the same text whether it was checked just now or earlier; damaged steps are refused every time.
import { expect, test } from "bun:test";
import { runRow } from "../src/core/runs/run-rows";
import { DamagedColumnError } from "../src/core/shared/json";

const at = {
  projectId: "prj_1",
  groupRunId: null,
  position: 0,
  trigger: "api" as const,
  options: { environmentId: null, variables: {}, secrets: {}, metadata: {} },
  now: "2026-11-25T00:00:00.000Z",
};

test("the snapshot is JSON.stringify of {kind, steps, timeout_ms, retries}, the first time and every time after", () => {
  // Stored with spaces and its keys in another order: the snapshot holds the steps as parsed, written as JSON.
  const steps = '[ { "expect": [ { "status": 200 } ], "request": { "method": "GET", "url": "/items/1" } } ]';
  const automation = { id: "aut_1", name: "item", kind: "http" as const, steps, timeout_ms: 1500, retries: 2, environment_id: null };
  const expected = JSON.stringify({ kind: "http", steps: JSON.parse(steps), timeout_ms: 1500, retries: 2 });
  expect(runRow(automation, at).spec).toBe(expected);
  expect(runRow(automation, at).spec).toBe(expected);
  // Another automation with the same steps but its own settings gets its own.
  const other = { ...automation, id: "aut_2", kind: "browser" as const, timeout_ms: 0, retries: 0 };
  expect(JSON.parse(runRow(other, at).spec)).toEqual({ kind: "browser", steps: JSON.parse(steps), timeout_ms: 0, retries: 0 });
});

test("damaged steps are refused, naming the automation, each time they are read", () => {
  const automation = { id: "aut_bad", name: "bad", kind: "http" as const, steps: '[{"request": ', timeout_ms: 1000, retries: 0, environment_id: null };
  for (let i = 0; i < 2; i++) {
    expect(() => runRow(automation, at)).toThrow(DamagedColumnError);
    expect(() => runRow(automation, at)).toThrow(/steps of automation aut_bad/);
  }
  expect(() => runRow({ ...automation, steps: '["not a step"]' }, at)).toThrow(/steps of automation aut_bad/);
});
