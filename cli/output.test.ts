import { expect, test } from "bun:test";
import { printable, printableData, renderFailures, renderJson, renderRecord } from "./output";

const plain = { tty: false, color: false } as Parameters<typeof renderFailures>[1];
const run = (name: string, status: string) => ({ id: `run_${name}`, automation_name: name, status, steps: [], error: null });

test("the failures heading counts cancelled runs apart: they did not fail", () => {
  expect(renderFailures([run("a", "failed"), run("b", "passed")], plain).split("\n")[0]).toBe("1 failure:");
  expect(renderFailures([run("a", "cancelled"), run("b", "cancelled")], plain).split("\n")[0]).toBe("2 cancelled:");
  expect(renderFailures([run("a", "failed"), run("b", "error"), run("c", "cancelled")], plain).split("\n")[0]).toBe("2 failures, 1 cancelled:");
  expect(renderFailures([run("a", "passed")], plain)).toBe("");
  // A quarantined automation's failure is listed, marked, and said not to count.
  const quarantined = renderFailures([{ ...run("q", "failed"), quarantined: true }], plain).split("\n");
  expect(quarantined[0]).toBe("1 failure (1 quarantined: not counted):");
  expect(quarantined[1]).toBe("1) q (run_q) failed (quarantined)");
});

test("a history shows its run count, its pass rate as a share and the days that had runs as a table", () => {
  const day = (date: string, runs: number, passed: number) => ({
    date,
    runs,
    passed,
    failed: runs - passed,
    pass_rate: runs ? passed / runs : null,
    p50_ms: runs ? 42.4 : null,
  });
  const text = renderRecord(
    {
      days: 3,
      runs: 13,
      passed: 9,
      failed: 4,
      pass_rate: 9 / 13,
      p50_ms: 42.4,
      p95_ms: 99.6,
      daily: [day("2026-12-04", 0, 0), day("2026-12-05", 10, 7), day("2026-12-06", 3, 2)],
    },
    plain,
  );
  expect(text).toMatch(/^runs +13$/m);
  expect(text).toMatch(/^pass_rate +69.2%$/m);
  expect(text).toMatch(/^p95_ms +100 ms$/m);
  expect(text).toMatch(/^2026-12-05 +10 +7 +3 +70% +42 ms$/m);
  expect(text).not.toContain("2026-12-04");
  expect(text).not.toContain("daily");
});

test("control characters from the server are shown as escapes; a multi-line field keeps its newlines and tabs", () => {
  expect(printable("esc\u001b[2J\u001b]0;pwn\u0007name")).toBe("esc\\x1b[2J\\x1b]0;pwn\\x07name");
  expect(printable("csi\u009b31m rtl\u202e del\u007f")).toBe("csi\\x9b31m rtl\\u202e del\\x7f");
  expect(printable("one\ntwo")).toBe("one\\x0atwo");
  expect(printable("one\r\n\ttwo\rover", true)).toBe("one\n\ttwo\\x0dover");
  expect(printableData({ name: "a\nb", description: "a\nb", tags: ["t\u001b"] })).toEqual({ name: "a\\x0ab", description: "a\nb", tags: ["t\\x1b"] });
  expect(renderRecord({ name: "x\u001b[2J" }, plain)).toBe("name       x\\x1b[2J");
});

test("in a log (not a terminal) a record's long values are whole; on a terminal they are cut to fit", () => {
  const error = `step 1 (GET /items/1): {{NOPE}} is not defined: add it to the run's environment (variables or secrets) or pass --var NOPE=VALUE`;
  const record = { id: "run_x", status: "error", error, tags: Array.from({ length: 20 }, (_, i) => `tag-${i}`) };
  const logged = renderRecord(record, plain);
  expect(logged).toContain(error);
  expect(logged).toContain("tag-19");
  expect(logged).not.toContain("…");
  const onTerminal = renderRecord(record, { tty: true, color: false } as typeof plain);
  expect(onTerminal).not.toContain(error);
  expect(onTerminal).toContain("…");
});

test("svc dashboard: a line per project with its automations by health and its runs going, then the latest runs", () => {
  const tile = (slug: string, n: Record<string, number>) => ({
    id: `prj_${slug}`,
    slug,
    name: slug,
    automations: 0,
    passing: 0,
    flaky: 0,
    failing: 0,
    without_verdict: 0,
    queued: 0,
    running: 0,
    ...n,
  });
  const text = renderJson(
    {
      projects: [tile("shop", { automations: 4, passing: 2, flaky: 1, failing: 1, running: 2 }), tile("blog", {})],
      more_projects: true,
      recent_runs: [
        { id: "run_a", project_id: "prj_shop", automation_name: "checkout", status: "failed", duration_ms: 12, created_at: "2026-12-07T10:00:00.000Z" },
      ],
    },
    "dashboard",
    plain,
  );
  expect(text).toMatch(/^PROJECT +AUTOMATIONS +PASSING +FLAKY +FAILING +NO VERDICT +QUEUED +RUNNING$/m);
  expect(text).toMatch(/^shop +4 +2 +1 +1 +0 +0 +2$/m);
  expect(text).toMatch(/^blog +0 +0 +0 +0 +0 +0 +0$/m);
  expect(text).toContain("(the first 2 projects: svc projects list shows them all)");
  expect(text).toMatch(/^run_a +checkout +shop +failed +12 ms +2026-12-07T10:00:00.000Z$/m);
  expect(renderJson({ projects: [], more_projects: false, recent_runs: [] }, "dashboard", plain)).toBe("No projects yet.");
});
