// The reads of the runs table that the sweeps and lists repeat keep to an index on a real migrated SQLite file: none
// walks the whole table, which on a million runs would hold the store's one connection for seconds. Written against
// the indexes of migration 0018 (runs_queue serves reads by status; runs_unrolled holds the runs not counted yet).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kysely } from "kysely";
import { openDatabase } from "../src/db/database";
import type { DB } from "../src/db/schema";
import { sqliteDialect } from "../src/db/sqlite";
import { anyRunCreatedBefore, runsCreatedBefore } from "../src/core/history/retention-store";
import { markRolledUp, unrolledRuns } from "../src/core/history/store";
import { groupRunHasOpenRuns, locallyRunningRuns, runsQuery } from "../src/core/runs/store";

const dir = mkdtempSync(join(tmpdir(), "svc-run-plans-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the repeated reads of runs search an index, and the sweep of uncounted runs reads the partial one", async () => {
  const opened = await openDatabase(dir);
  const sqlite = opened.sqlite as NonNullable<typeof opened.sqlite>;
  const seen: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<DB>({ dialect: sqliteDialect(sqlite), log: (e) => void seen.push({ sql: e.query.sql, parameters: e.query.parameters }) });
  const plan = async (work: () => Promise<unknown>) => {
    seen.length = 0;
    await work();
    expect(seen.length).toBeGreaterThan(0);
    return seen
      .map((q) =>
        sqlite
          .query<{ detail: string }, never[]>(`EXPLAIN QUERY PLAN ${q.sql}`)
          .all(...(q.parameters as never[]))
          .map((r) => r.detail)
          .join(" | "),
      )
      .join(" || ");
  };
  const cutoff = "2026-01-01T00:00:00.000Z";
  const plans = {
    sweep: await plan(() => unrolledRuns(db, { limit: 100 })),
    counted: await plan(() => unrolledRuns(db, { ids: ["run_1", "run_2"] })),
    mark: await plan(() => markRolledUp(db, ["run_1"])),
    anyOld: await plan(() => anyRunCreatedBefore(db, cutoff)),
    old: await plan(() => runsCreatedBefore(db, cutoff, 100)),
    byStatus: await plan(() => runsQuery(db, "prj_1", { status: "passed" }).orderBy("created_at", "desc").limit(50).execute()),
    open: await plan(() => groupRunHasOpenRuns(db, "grp_1", "prj_1")),
    local: await plan(() => locallyRunningRuns(db)),
  };
  for (const [name, p] of Object.entries(plans)) {
    // "SCAN runs" alone is the whole table; a scan of an index names it ("SCAN runs USING INDEX ...").
    expect({ name, fullScan: /SCAN runs(?! USING)/.test(p) }).toEqual({ name, fullScan: false });
  }
  expect(plans.sweep).toContain("runs_unrolled");
  expect(plans.anyOld).toContain("runs_created");
  expect(plans.byStatus).toContain("runs_queue");
  expect(plans.local).toContain("runs_queue");
  await opened.close();
});
