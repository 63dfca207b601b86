// The run_daily roll-ups and the reads health and history need: every query of src/core/history but retention's.
import { CompiledQuery, type Insertable, type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from "kysely";
import type { DB, RunDailyTable, RunTable } from "../../db/schema";
import { oneOf } from "../shared/id-lists-store";
import { sqlDialect } from "../storage";
import { type Histogram, mergeInto, readHistogram } from "./durations";

type RunStatus = Selectable<RunTable>["status"];
const ACTIVE: RunStatus[] = ["queued", "running"];
const COUNTED: RunStatus[] = ["passed", "failed", "error", "timed_out"];
/** Ids per statement: well under SQLite's limit on bound parameters. */
const CHUNK = 400;
/** A finished run as health reads it. */
type Verdict = { status: RunStatus; attempts: string };

/**
 * The latest `limit` finished runs (cancelled ones are not verdicts) of each of these automations, newest first
 * (by created_at alone, so the automation index gives the order), by automation: CHUNK automations per statement,
 * each read on that index (a lateral read on PostgreSQL, a correlated one on SQLite), not a statement apiece.
 */
export async function recentVerdictsOf(db: Kysely<DB>, automationIds: string[], limit: number): Promise<Map<string, Verdict[]>> {
  const out = new Map<string, Verdict[]>();
  const sqlite = sqlDialect(db) === "sqlite";
  for (let i = 0; i < automationIds.length; i += CHUNK) {
    const chunk = automationIds.slice(i, i + CHUNK);
    const { rows } = sqlite
      ? await sql<Verdict & { automation_id: string }>`
      select a.value as automation_id, r.status, r.attempts
      from json_each(${JSON.stringify(chunk)}) as a
      join runs r on r.rowid in (
        select rowid from runs
        where automation_id = a.value and status in (${sql.join(COUNTED)})
        order by created_at desc limit ${limit}
      )
      order by a.value, r.created_at desc`.execute(db)
      : await sql<Verdict & { automation_id: string }>`
      select a.id as automation_id, r.status, r.attempts
      from (values ${sql.join(chunk.map((id) => sql`(${id})`))}) as a(id)
      cross join lateral (
        select status, attempts, created_at from runs
        where automation_id = a.id and status in (${sql.join(COUNTED)})
        order by created_at desc limit ${limit}
      ) r
      order by a.id, r.created_at desc`.execute(db);
    for (const id of chunk) out.set(id, []);
    for (const r of rows) out.get(r.automation_id)?.push({ status: r.status, attempts: r.attempts });
  }
  return out;
}

/** Roll-ups of these automations, CHUNK automations per statement, on the days `day` keeps. */
async function dailiesWhere(db: Kysely<DB>, automationIds: string[], day: RawBuilder<SqlBool>): Promise<Selectable<RunDailyTable>[]> {
  const out: Selectable<RunDailyTable>[] = [];
  for (let i = 0; i < automationIds.length; i += CHUNK) {
    const chunk = automationIds.slice(i, i + CHUNK);
    out.push(
      ...(await db
        .selectFrom("run_daily")
        .selectAll()
        .where(oneOf(db, "automation_id", chunk))
        .where(day)
        .execute()),
    );
  }
  return out;
}

/** Roll-ups from `fromDay` on, of these automations. */
export function dailyOfAutomations(db: Kysely<DB>, automationIds: string[], fromDay: string): Promise<Selectable<RunDailyTable>[]> {
  return dailiesWhere(db, automationIds, sql<SqlBool>`day >= ${fromDay}`);
}

/** Roll-ups of a project's automations from `fromDay` on. */
export async function dailyOfProject(db: Kysely<DB>, projectId: string, fromDay: string): Promise<Selectable<RunDailyTable>[]> {
  return db.selectFrom("run_daily").selectAll().where("project_id", "=", projectId).where("day", ">=", fromDay).execute();
}

/** Ended runs not yet counted in run_daily: these ids, or else up to `limit` of any. */
export async function unrolledRuns(db: Kysely<DB>, filter: { ids?: string[]; limit?: number }) {
  let q = db
    .selectFrom("runs")
    .select(["id", "project_id", "automation_id", "status", "attempts", "duration_ms", "finished_at", "created_at", "trigger"])
    // Written in the statement: the partial index of runs not counted yet (runs_unrolled) serves only `rolled_up = 0`,
    // which a generic plan (PostgreSQL's prepared statements) cannot prove of a bound value.
    .where(sql<boolean>`rolled_up = 0`)
    .where("status", "not in", ACTIVE);
  if (filter.ids) {
    if (filter.ids.length === 0) return [];
    q = q.where(oneOf(db, "id", filter.ids));
  }
  if (filter.limit !== undefined) q = q.limit(filter.limit);
  return q.execute();
}

export async function markRolledUp(db: Kysely<DB>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable("runs")
    .set({ rolled_up: 1 })
    .where(oneOf(db, "id", ids))
    .where("rolled_up", "=", 0)
    .execute();
}

/** The roll-ups of these automations on these days (a superset of the pairs wanted: the caller picks). */
function dailiesOf(db: Kysely<DB>, automationIds: string[], days: string[]): Promise<Selectable<RunDailyTable>[]> {
  return dailiesWhere(db, automationIds, oneOf(db, "day", days));
}

/** Counts to add to one automation's roll-up of one day: `durations` is a histogram of the durations added. */
export type DailyIncrement = Omit<Insertable<RunDailyTable>, "durations"> & { durations: Histogram };

/** Rows per upsert: 8 parameters each, well under SQLite's limit on bound parameters. */
const UPSERT_CHUNK = 100;
/** The upsert for `n` rows, by its size: written once (a query builder makes a frozen node per value). */
const upserts = new Map<number, string>();

/**
 * On SQLite the upsert adds the counts and merges the histograms in the statement itself (a damaged stored histogram
 * counts as empty), so a batch of runs of as many automations costs no read and no JSON in JavaScript; the statement
 * is written once per size and only given values.
 */
function sqliteUpsert(n: number): string {
  let text = upserts.get(n);
  if (text === undefined) {
    text = `INSERT INTO run_daily (automation_id, day, project_id, runs, passed, failed, flaky, durations) VALUES ${Array.from({ length: n }, () => "(?, ?, ?, ?, ?, ?, ?, ?)").join(", ")}
ON CONFLICT (automation_id, day) DO UPDATE SET runs = run_daily.runs + excluded.runs, passed = run_daily.passed + excluded.passed,
  failed = run_daily.failed + excluded.failed, flaky = run_daily.flaky + excluded.flaky,
  durations = (SELECT COALESCE(json_group_object(key, n), '{}') FROM (SELECT key, SUM(value) AS n FROM (
    SELECT key, value FROM json_each(CASE WHEN json_valid(run_daily.durations) AND json_type(run_daily.durations) = 'object' THEN run_daily.durations ELSE '{}' END)
    UNION ALL SELECT key, value FROM json_each(excluded.durations)) GROUP BY key))`;
    upserts.set(n, text);
  }
  return text;
}

/**
 * Adds runs' counts to their roll-ups (one increment per automation and day). On PostgreSQL the roll-ups are read,
 * added to and written whole, many rows per statement.
 */
export async function addToDailies(db: Kysely<DB>, increments: DailyIncrement[]): Promise<void> {
  if (increments.length === 0) return;
  if (sqlDialect(db) === "sqlite") {
    for (let i = 0; i < increments.length; i += UPSERT_CHUNK) {
      const chunk = increments.slice(i, i + UPSERT_CHUNK);
      const parameters: unknown[] = [];
      for (const d of chunk) parameters.push(d.automation_id, d.day, d.project_id, d.runs, d.passed, d.failed, d.flaky, JSON.stringify(d.durations));
      await db.executeQuery(CompiledQuery.raw(sqliteUpsert(chunk.length), parameters));
    }
    return;
  }
  const existing = new Map(
    (await dailiesOf(db, [...new Set(increments.map((d) => d.automation_id))], [...new Set(increments.map((d) => d.day))])).map((d) => [
      `${d.automation_id} ${d.day}`,
      d,
    ]),
  );
  const rows = increments.map((d) => {
    const found = existing.get(`${d.automation_id} ${d.day}`);
    if (!found) return { ...d, durations: JSON.stringify(d.durations) };
    const hist = readHistogram(found.durations);
    mergeInto(hist, d.durations);
    return {
      ...d,
      runs: found.runs + d.runs,
      passed: found.passed + d.passed,
      failed: found.failed + d.failed,
      flaky: found.flaky + d.flaky,
      durations: JSON.stringify(hist),
    };
  });
  // Written whole, many rows per statement.
  for (let i = 0; i < rows.length; i += CHUNK / 2) {
    await db
      .insertInto("run_daily")
      .values(rows.slice(i, i + CHUNK / 2))
      .onConflict((oc) =>
        oc.columns(["automation_id", "day"]).doUpdateSet((eb) => ({
          runs: eb.ref("excluded.runs"),
          passed: eb.ref("excluded.passed"),
          failed: eb.ref("excluded.failed"),
          flaky: eb.ref("excluded.flaky"),
          durations: eb.ref("excluded.durations"),
        })),
      )
      .execute();
  }
}

/** The automations of these runs. */
export async function automationsOfRuns(db: Kysely<DB>, runIds: string[]): Promise<string[]> {
  if (runIds.length === 0) return [];
  const rows = await db.selectFrom("runs").select("automation_id").distinct().where("id", "in", runIds).execute();
  return rows.map((r) => r.automation_id);
}
