// History and health: daily roll-ups written as runs end (they outlive the runs retention removes), an automation's
// health from its latest runs, and the history of an automation or a project over the last days.
import type { Kysely, Selectable } from "kysely";
import type { DB, RunDailyTable } from "../../db/schema";
import type { ops } from "../../manifest";
import type { Core } from "../context";
import type { Handler } from "../handler";
import { resolveAutomation, resolveProject } from "../scope";
import type { FinishedRun } from "../storage";
import { addDuration, type Histogram, mergeInto, percentile, readHistogram } from "./durations";
import * as store from "./store";

type O = typeof ops;

const DAY_MS = 86_400_000;
/** YYYY-MM-DD (UTC) of a moment. */
export const dayOf = (t: number | string): string =>
  // A stored time is already ISO 8601 in UTC (toISOString): its first ten characters are the day.
  typeof t === "string" && t.length === 24 && t[10] === "T" && t[23] === "Z" ? t.slice(0, 10) : new Date(t).toISOString().slice(0, 10);
/** The first day of the `days` days that end today (UTC). */
const firstDay = (days: number, now = Date.now()) => dayOf(now - (days - 1) * DAY_MS);

const FIRST_ATTEMPT_PASSED = /^\[\{"attempt":1,"status":"passed","error":null,"message":null,"duration_ms":\d+\}\]$/;

/**
 * Passed only after a failed attempt (flaky), from the stored attempts. Read without the column's schema (runs end,
 * and group runs settle, by the thousand): a list that is not one counts as no retry.
 */
export const passedAfterRetry = (status: string, attemptsJson: string): boolean => {
  if (status !== "passed") return false;
  // One attempt that passed, as finishRuns writes it: the common case, told without parsing.
  if (FIRST_ATTEMPT_PASSED.test(attemptsJson)) return false;
  try {
    const attempts: unknown = JSON.parse(attemptsJson);
    return Array.isArray(attempts) && attempts.some((a) => typeof a?.status === "string" && a.status !== "passed");
  } catch {
    return false;
  }
};

/**
 * Counts ended runs in run_daily, once each (cancelled runs are marked but not counted): the runs given, or up to
 * `limit` of those not counted yet (runs ended before this existed, or by a crash between finishing and counting).
 * Answers how many runs it looked at.
 */
export async function rollUpRuns(db: Kysely<DB>, filter: { ids?: string[]; limit?: number }): Promise<number> {
  return db.transaction().execute((trx) => rollUpRunsIn(trx, filter));
}

/** As rollUpRuns, inside the caller's transaction. */
export async function rollUpRunsIn(trx: Kysely<DB>, filter: { ids?: string[]; limit?: number }): Promise<number> {
  const runs = await store.unrolledRuns(trx, filter);
  if (runs.length === 0) return 0;
  await countInDailies(trx, runs);
  await store.markRolledUp(
    trx,
    runs.map((r) => r.id),
  );
  return runs.length;
}

/** What a run's roll-up counts of it. */
export type CountedRun = Pick<
  FinishedRun,
  "id" | "project_id" | "automation_id" | "status" | "attempts" | "duration_ms" | "finished_at" | "created_at" | "trigger"
>;

/**
 * Adds ended runs to their automations' daily roll-ups, inside the caller's transaction; the caller marks them
 * counted (the statement that finishes runs does it as it finishes them, and finishRuns calls this with them).
 */
export async function countInDailies(trx: Kysely<DB>, runs: CountedRun[]): Promise<void> {
  const days = new Map<string, store.DailyIncrement>();
  // Cancelled runs and test runs (svc test: no saved automation) are marked, not counted.
  for (const r of runs) {
    if (r.status === "cancelled" || r.trigger === "test") continue;
    const day = dayOf(r.finished_at ?? r.created_at);
    const key = `${r.automation_id} ${day}`;
    let d = days.get(key);
    if (!d) {
      d = { automation_id: r.automation_id, day, project_id: r.project_id, runs: 0, passed: 0, failed: 0, flaky: 0, durations: {} };
      days.set(key, d);
    }
    d.runs++;
    if (r.status === "passed") d.passed++;
    else d.failed++;
    if (passedAfterRetry(r.status, r.attempts)) d.flaky++;
    if (r.duration_ms !== null) addDuration(d.durations, r.duration_ms);
  }
  await store.addToDailies(trx, [...days.values()]);
}

export type Health = {
  state: "passing" | "failing" | "flaky" | "unknown";
  last_status: "passed" | "failed" | "error" | "timed_out" | null;
  runs: number;
  pass_rate: number | null;
  flips: number;
  runs_7d: number;
  pass_rate_7d: number | null;
};

const rate = (passed: number, runs: number) => (runs === 0 ? null : passed / runs);

/**
 * Flaky: one of the latest runs passed only after a retry, or the verdict flipped between passing and not at least
 * `history.flaky_flips` times among the latest `history.window_runs` runs. Otherwise the latest run's verdict.
 */
export function healthOf(recent: { status: string; attempts: string }[], week: { runs: number; passed: number }, cfg: { flaky_flips: number }): Health {
  const ok = recent.map((r) => r.status === "passed");
  let flips = 0;
  for (let i = 1; i < ok.length; i++) if (ok[i] !== ok[i - 1]) flips++;
  const passed = ok.filter(Boolean).length;
  const latest = recent[0];
  const flaky = recent.some((r) => passedAfterRetry(r.status, r.attempts)) || flips >= cfg.flaky_flips;
  return {
    state: !latest ? "unknown" : flaky ? "flaky" : latest.status === "passed" ? "passing" : "failing",
    last_status: (latest?.status ?? null) as Health["last_status"],
    runs: recent.length,
    pass_rate: rate(passed, recent.length),
    flips,
    runs_7d: week.runs,
    pass_rate_7d: rate(week.passed, week.runs),
  };
}

/** The health of each of these automations, by id. */
export async function healthOfAutomations(core: Core, automationIds: string[]): Promise<Map<string, Health>> {
  const week = new Map<string, { runs: number; passed: number }>();
  for (const d of await store.dailyOfAutomations(core.db, automationIds, firstDay(7))) {
    const w = week.get(d.automation_id) ?? { runs: 0, passed: 0 };
    w.runs += d.runs;
    w.passed += d.passed;
    week.set(d.automation_id, w);
  }
  const recent = await store.recentVerdictsOf(core.db, automationIds, core.config.history.window_runs);
  const out = new Map<string, Health>();
  for (const id of automationIds) out.set(id, healthOf(recent.get(id) ?? [], week.get(id) ?? { runs: 0, passed: 0 }, core.config.history));
  return out;
}

/** The history over `days` days ending today, from the roll-ups: totals and one entry per day, oldest first. */
export function historyOf(rows: Selectable<RunDailyTable>[], days: number, now = Date.now()) {
  const byDay = new Map<string, { runs: number; passed: number; failed: number; hist: Histogram }>();
  const all: Histogram = {};
  let runs = 0;
  let passed = 0;
  let failed = 0;
  for (const r of rows) {
    const d = byDay.get(r.day) ?? { runs: 0, passed: 0, failed: 0, hist: {} };
    const h = readHistogram(r.durations);
    d.runs += r.runs;
    d.passed += r.passed;
    d.failed += r.failed;
    mergeInto(d.hist, h);
    mergeInto(all, h);
    byDay.set(r.day, d);
    runs += r.runs;
    passed += r.passed;
    failed += r.failed;
  }
  const daily = [];
  for (let i = days - 1; i >= 0; i--) {
    const date = dayOf(now - i * DAY_MS);
    const d = byDay.get(date);
    daily.push({
      date,
      runs: d?.runs ?? 0,
      passed: d?.passed ?? 0,
      failed: d?.failed ?? 0,
      pass_rate: d ? rate(d.passed, d.runs) : null,
      p50_ms: d ? percentile(d.hist, 0.5) : null,
    });
  }
  return { days, runs, passed, failed, pass_rate: rate(passed, runs), p50_ms: percentile(all, 0.5), p95_ms: percentile(all, 0.95), daily };
}

export const getAutomationHistory: Handler<O["getAutomationHistory"]> = async (ctx, { params, query }) => {
  const { automation } = await resolveAutomation(ctx, params.project, params.automationId);
  const now = Date.now();
  return historyOf(await store.dailyOfAutomations(ctx.core.db, [automation.id], firstDay(query.days, now)), query.days, now);
};

export const getProjectHistory: Handler<O["getProjectHistory"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  const now = Date.now();
  return historyOf(await store.dailyOfProject(ctx.core.db, project.id, firstDay(query.days, now)), query.days, now);
};

/** The automations of these runs (retention checks their counts after the runs end). */
export async function automationsOfEndedRuns(core: Core, runIds: string[]): Promise<string[]> {
  return store.automationsOfRuns(core.db, runIds);
}
