// Retention's pruning speed: a database of 1,000,000 finished runs (rows written directly, ~half older than
// run_days, each automation over max_runs_per_automation, one run in ten inside a group run of ten), pruned the way
// the retention engine does it (batches of 500, whole group runs, roll-ups first). Prints rows written, runs and
// group runs removed, runs/s, the slowest batch (how long the database is held at most at a time), and the roll-ups
// left intact.
// Usage: bun bench/retention.ts [--runs 1000000] [--automations 1000] [--smoke]   (--smoke: 20,000 runs)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { openCore } from "../src/core";
import { pruneExtraBatch, pruneOldBatch } from "../src/core/history/retention";
import { rollUpRuns } from "../src/core/history/operations";
import { flag, has } from "./args";

const smoke = has("smoke");
const RUNS = flag("runs", smoke ? 20_000 : 1_000_000);
const AUTOMATIONS = flag("automations", smoke ? 20 : 1000);
const BATCH = 500;
const RUN_DAYS = 90;
/** Each automation keeps this many: a quarter of what the young half leaves it. */
const MAX_RUNS = Math.max(1, Math.floor(RUNS / AUTOMATIONS / 4));
const SPAN_DAYS = 180;
const DAY_MS = 86_400_000;

const dataDir = mkdtempSync(join(tmpdir(), "svc-retention-"));
const config = loadConfig({ env: {}, flags: { data_dir: dataDir, "retention.run_days": RUN_DAYS, "retention.max_runs_per_automation": MAX_RUNS } });
const core = await openCore(config);
try {
  const t0 = performance.now();
  const now = Date.now();
  const sqlite = core.sqlite;
  if (!sqlite) throw new Error("this bench fills SQLite's file directly: run it on the SQLite backend");
  const iso = (ms: number) => new Date(ms).toISOString();
  sqlite.run("INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ('wsp_b', 'b', 'b', ?1, ?1)", [iso(now)]);
  sqlite.run(
    "INSERT INTO projects (id, workspace_id, slug, name, description, openapi, created_at, updated_at) VALUES ('prj_b', 'wsp_b', 'b', 'b', '', NULL, ?1, ?1)",
    [iso(now)],
  );
  const spec = JSON.stringify({ kind: "http", steps: [{ request: { url: "/health" } }], timeout_ms: 30000, retries: 0 });
  const attempts = JSON.stringify([{ attempt: 1, status: "passed", error: null, message: null, duration_ms: 42 }]);
  const summary = JSON.stringify({ steps: 1, passed: 1, failed: 0, skipped: 0 });
  const results = JSON.stringify({ steps: [{ index: 0, name: "GET /health", status: "passed", duration_ms: 42, message: null }], artifacts: [] });
  const insertRun = sqlite.prepare(
    `INSERT INTO runs (id, project_id, automation_id, automation_name, group_run_id, environment_id, trigger, status, spec, attempts, started_at,
       finished_at, duration_ms, summary, error, results, claim, position, quarantined, rolled_up, created_at, updated_at)
     VALUES (?1, 'prj_b', ?2, ?2, ?3, NULL, 'api', ?4, ?5, ?6, ?7, ?7, ?8, ?9, NULL, ?10, 1, ?11, 0, 1, ?7, ?7)`,
  );
  const insertGroupRun = sqlite.prepare(
    "INSERT INTO group_runs (id, project_id, group_id, group_name, trigger, status, summary, started_at, finished_at, created_at, updated_at) VALUES (?1, 'prj_b', NULL, 'g', 'api', 'passed', '{}', ?2, ?2, ?2, ?2)",
  );
  const CHUNK = 10_000;
  let groupRuns = 0;
  for (let start = 0; start < RUNS; start += CHUNK) {
    sqlite.transaction(() => {
      for (let i = start; i < Math.min(RUNS, start + CHUNK); i++) {
        // Oldest first: run i was made at an even spread over the last SPAN_DAYS days.
        const at = iso(now - SPAN_DAYS * DAY_MS + Math.floor((i / RUNS) * SPAN_DAYS * DAY_MS));
        // Every tenth block of ten runs is one group run over ten automations.
        const inGroup = Math.floor(i / 10) % 10 === 0;
        const group = inGroup ? `grn_${Math.floor(i / 10)}` : null;
        if (inGroup && i % 10 === 0) {
          insertGroupRun.run(group, at);
          groupRuns++;
        }
        const status = i % 7 === 0 ? "failed" : "passed";
        insertRun.run(
          `run_${String(i).padStart(8, "0")}`,
          `aut_${i % AUTOMATIONS}`,
          group,
          status,
          spec,
          attempts,
          at,
          40 + (i % 50),
          summary,
          results,
          i % 10,
        );
      }
    })();
  }
  const setupMs = performance.now() - t0;
  console.log(`setup           ${RUNS} runs, ${groupRuns} group runs, ${AUTOMATIONS} automations written in ${Math.round(setupMs)} ms`);
  console.log(`limits          run_days ${RUN_DAYS}, max_runs_per_automation ${MAX_RUNS}, batches of ${BATCH}`);
  // What retention finds first when it starts on a database written before roll-ups: counted here, not timed.
  sqlite.run("UPDATE runs SET rolled_up = 0 WHERE id IN (SELECT id FROM runs ORDER BY created_at DESC LIMIT 2000)");
  const rollStart = performance.now();
  while ((await rollUpRuns(core.db, { limit: BATCH })) === BATCH) {}
  console.log(`roll-up         2000 uncounted runs counted in ${Math.round(performance.now() - rollStart)} ms`);

  const before = sqlite.query<{ n: number; s: number }, []>("SELECT COUNT(*) AS n, COALESCE(SUM(runs), 0) AS s FROM run_daily").get();
  let removed = 0;
  let removedGroups = 0;
  let batches = 0;
  let slowest = 0;
  const timed = async (batch: () => ReturnType<typeof pruneOldBatch>) => {
    const b0 = performance.now();
    const r = await batch();
    slowest = Math.max(slowest, performance.now() - b0);
    removed += r.runs;
    removedGroups += r.groupRuns;
    batches++;
    return r.runs > 0;
  };
  const p0 = performance.now();
  while (await timed(() => pruneOldBatch(core, BATCH, now))) {}
  const ageMs = performance.now() - p0;
  const byAge = removed;
  const p1 = performance.now();
  const over = sqlite.query<{ a: string }, [number]>("SELECT automation_id AS a FROM runs GROUP BY automation_id HAVING COUNT(*) > ?1").all(MAX_RUNS);
  for (const { a } of over) while (await timed(() => pruneExtraBatch(core, a, BATCH))) {}
  const countMs = performance.now() - p1;
  const left = sqlite.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM runs").get()?.n ?? 0;
  const after = sqlite.query<{ n: number; s: number }, []>("SELECT COUNT(*) AS n, COALESCE(SUM(runs), 0) AS s FROM run_daily").get();
  const total = ageMs + countMs;
  console.log(`by age          ${byAge} runs in ${Math.round(ageMs)} ms (${Math.round(byAge / (ageMs / 1000))} runs/s)`);
  console.log(`by count        ${removed - byAge} runs in ${Math.round(countMs)} ms over ${over.length} automations`);
  console.log(`pruned          ${removed} runs and ${removedGroups} group runs in ${Math.round(total)} ms: ${Math.round(removed / (total / 1000))} runs/s`);
  console.log(`batches         ${batches}, slowest ${slowest.toFixed(1)} ms`);
  console.log(`left            ${left} runs; roll-ups ${after?.n} days holding ${after?.s} runs (before: ${before?.n} days, ${before?.s} runs)`);
  if (after?.s !== before?.s) throw new Error("pruning changed the roll-ups");
} finally {
  await core.close();
  rmSync(dataDir, { recursive: true, force: true });
}
