// The grouped run count behind /metrics, on a real migrated SQLite file.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../db/database";
import { runStatsReader } from "./stats";

const dir = mkdtempSync(join(tmpdir(), "svc-stats-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("counts runs per status, zero for absent statuses, and the queue depth", async () => {
  const d = await openDatabase(dir);
  const sqlite = d.sqlite as NonNullable<typeof d.sqlite>;
  const t = "2026-01-01T00:00:00.000Z";
  sqlite.run("INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ('wsp_1', 'W', 'w', ?, ?)", [t, t]);
  sqlite.run("INSERT INTO projects (id, workspace_id, slug, name, description, created_at, updated_at) VALUES ('prj_1', 'wsp_1', 'p', 'P', '', ?, ?)", [t, t]);
  const statuses = ["queued", "queued", "queued", "running", "passed", "passed", "failed"];
  for (const [i, status] of statuses.entries())
    sqlite.run(
      `INSERT INTO runs (id, project_id, automation_id, automation_name, trigger, status, spec, attempts, summary, results, created_at, updated_at)
       VALUES (?, 'prj_1', 'aut_1', 'a', 'api', ?, '{}', '[]', '{}', '{}', ?, ?)`,
      [`run_${i}`, status, t, t],
    );
  const stats = await runStatsReader(d.queue)();
  expect(stats.byStatus).toEqual({ queued: 3, running: 1, passed: 2, failed: 1, error: 0, timed_out: 0, cancelled: 0 });
  expect(stats.queueDepth).toBe(3);
  await d.close();
});
