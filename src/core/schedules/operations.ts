// Schedules: runs started by the clock. A due time fires once however many nodes share the database (a row per
// schedule and due time), a server that was down fires at most one catch-up, and the runs it starts carry
// trigger "schedule" and the schedule's id.
import type { Kysely, Selectable, Transaction } from "kysely";
import type { DB, ScheduleFireTable, ScheduleTable } from "../../db/schema";
import type { ops } from "../../manifest";
import { AppError, conflict, type ErrorDetail, forbidden, invalid } from "../../manifest/errors";
import { newId } from "../../security/ids";
import { findMembership } from "../access/store";
import { AlertRecorder } from "../alerts/state";
import { resolveEnvironmentId } from "../automations/operations";
import * as automations from "../automations/store";
import { canAdminister, type Core, type OpContext, type Principal } from "../context";
import { protectedEnvironmentAmong } from "../environments/store";
import * as groups from "../groups/store";
import type { Handler } from "../handler";
import { enqueueRuns, NO_RUN_OPTIONS, startGroupRun } from "../runs/operations";
import * as runs from "../runs/store";
import { selectAutomations } from "../runs/selection";
import { pathParamId, resolveProject, resolveSchedule } from "../scope";
import { StringList } from "../shared/columns";
import { readJsonColumn, readJsonColumnOr } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { configuredAddress } from "../address";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import * as store from "./store";
import { canonicalTimeZone, cronProblem, nextDue, nextDueTimes, type Timing, timeZoneProblem } from "./timing";
import { z } from "zod";

type O = typeof ops;
type ScheduleRow = Selectable<ScheduleTable>;
type FireRow = Selectable<ScheduleFireTable>;
type Target = { automation: string } | { group: string } | { tags: string[] };

export const StoredTarget = z.union([z.object({ automation: z.string() }), z.object({ group: z.string() }), z.object({ tags: z.array(z.string()) })]);
/** The most automations a tags target starts at once (as many as a group may hold). */
const TAGS_TARGET_MAX = 1000;
const SHOWN_DUE_TIMES = 5;

function timingOf(row: Pick<ScheduleRow, "cron" | "timezone" | "interval_seconds">): Timing {
  return { cron: row.cron, timezone: row.timezone, interval_seconds: row.interval_seconds };
}

/** What a due time did, from its fire row. */
function toFire(fire: FireRow) {
  const started = fire.run_id !== null || fire.group_run_id !== null;
  return {
    due_at: fire.due_at,
    fired_at: fire.fired_at,
    outcome: fire.skipped !== null ? ("skipped" as const) : started ? ("started" as const) : ("failed" as const),
    reason: fire.skipped ?? (started ? null : (fire.error ?? "it started nothing")),
    run_id: fire.run_id,
    group_run_id: fire.group_run_id,
  };
}

export function toSchedule(row: ScheduleRow, lastFire: FireRow | null = null) {
  const next = row.next_run_at;
  const later = next === null ? [] : nextDueTimes(timingOf(row), new Date(next), new Date(next), SHOWN_DUE_TIMES - 1).map((d) => d.toISOString());
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    target: readJsonColumnOr(StoredTarget, row.target, { tags: [] }),
    environment_id: row.environment_id,
    cron: row.cron,
    timezone: row.timezone,
    interval_seconds: row.interval_seconds,
    enabled: row.enabled === 1,
    next_run_at: next,
    next_runs_at: next === null ? [] : [next, ...later],
    last_fired_at: row.last_fired_at,
    last_error: row.last_error,
    last_fire: lastFire === null ? null : toFire(lastFire),
    key: row.key,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The target with names resolved to ids; one that names nothing (or several) is a 400 on its field. */
async function resolveTarget(ctx: OpContext, projectId: string, target: Target): Promise<Target> {
  if ("tags" in target) return { tags: [...new Set(target.tags)] };
  const kind = "automation" in target ? "automation" : "group";
  const ref = "automation" in target ? target.automation : target.group;
  const id = await pathParamId(ctx, kind, projectId, ref);
  const found = kind === "automation" ? await automations.findAutomation(ctx.core.db, projectId, id) : await groups.findGroup(ctx.core.db, projectId, id);
  if (!found)
    throw invalid(`target.${kind}: no single ${kind} of this project is "${ref}"`, [
      { path: `target.${kind}`, message: `names no single ${kind} (give its id or exact name)` },
    ]);
  return kind === "automation" ? { automation: found.id } : { group: found.id };
}

/**
 * Refuses timing that cannot be used, and writes its time zone in the canonical spelling (`Europe/Berlin` for
 * `europe/berlin`) into `t`, so whoever stores it after the check (create, update, svc apply) stores that.
 */
export function checkTiming(t: Timing): void {
  const details: ErrorDetail[] = [];
  if (t.cron === null && t.interval_seconds === null) details.push({ path: "cron", message: "give cron or interval_seconds" });
  if (t.cron !== null && t.interval_seconds !== null) details.push({ path: "interval_seconds", message: "give cron or interval_seconds, not both" });
  if (t.cron !== null) {
    const problem = cronProblem(t.cron);
    if (problem) details.push({ path: "cron", message: problem });
  }
  if (t.timezone !== null) {
    if (t.cron === null) details.push({ path: "timezone", message: "a time zone applies to cron schedules only" });
    const problem = timeZoneProblem(t.timezone);
    if (problem) details.push({ path: "timezone", message: problem });
  }
  if (details.length > 0) throw invalid(details.map((d) => `${d.path}: ${d.message}`).join("; "), details);
  if (t.timezone !== null) t.timezone = canonicalTimeZone(t.timezone) ?? t.timezone;
}

/** What the schedule would start now: the automations (runnable ones) and, for a group or tags, the group run's name. */
async function targetAutomations(db: Transaction<DB>, projectId: string, target: Target) {
  if ("automation" in target) {
    const a = await automations.findAutomation(db, projectId, target.automation);
    if (!a) throw conflict("the schedule's automation no longer exists");
    if (a.status === "disabled") throw conflict(`the automation "${a.name}" is disabled`);
    return { group: null, order: null, automations: [a] };
  }
  if ("group" in target) {
    const g = await groups.findGroup(db, projectId, target.group);
    if (!g) throw conflict("the schedule's group no longer exists");
    const ids = readJsonColumn(StringList, g.automation_ids, `automation_ids of group ${g.id}`);
    const runnable = await automations.runnableAmong(db, projectId, ids);
    if (runnable.length === 0) throw conflict(`the group "${g.name}" has no automations that can run`);
    return { group: { id: g.id, name: g.name }, order: { mode: g.mode, stopOnFailure: g.stop_on_failure === 1 }, automations: runnable };
  }
  // The same rule as running a selection: tags match any of those listed, ignoring case; active automations only.
  const tagged = await selectAutomations(db, { id: projectId }, { tags: target.tags });
  if (tagged.length === 0) throw conflict(`no active automation carries any of the tags ${target.tags.join(", ")}`);
  if (tagged.length > TAGS_TARGET_MAX) throw conflict(`more than ${TAGS_TARGET_MAX} automations carry the tags ${target.tags.join(", ")}`);
  return { group: null, order: null, automations: tagged };
}

/**
 * Owners and admins only may schedule runs in a protected environment (the schedule's, or its automations' own) —
 * and change, pause or delete a schedule that runs there: a production check an owner set up is stopped only by
 * whoever may set it up, as its runs are cancelled only by them. `what` is what is refused, in the message.
 */
async function assertMaySchedule(ctx: OpContext, projectId: string, target: Target, environmentId: string | null, what: string): Promise<void> {
  if (canAdminister(ctx.principal)) return;
  await ctx.core.db.transaction().execute(async (trx) => {
    let envs: (string | null)[] = [environmentId];
    if (environmentId === null) {
      try {
        envs = (await targetAutomations(trx, projectId, target)).automations.map((a) => a.environment_id);
      } catch (e) {
        // A target with nothing to run yet (tags nobody carries) is allowed: the check is made again at each tick.
        if (!(e instanceof AppError)) throw e;
      }
    }
    const ids = [...new Set(envs.filter((id): id is string => id !== null))];
    const guarded = ids.length === 0 ? undefined : await protectedEnvironmentAmong(trx, ids);
    if (guarded !== undefined) throw forbidden(`the environment "${guarded}" is protected: only owners and admins can ${what}`);
  });
}

export function firstDue(t: Timing, enabled: boolean, now: Date): string | null {
  return enabled ? (nextDue(t, now, now)?.toISOString() ?? null) : null;
}

export const listSchedules: Handler<O["listSchedules"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  const page = await fetchPage(store.schedulesQuery(ctx.core.db, project.id), "schedules", query, (row) => row);
  const fires = await store.latestFires(
    ctx.core.db,
    page.data.map((r) => r.id),
  );
  return { data: page.data.map((r) => toSchedule(r, fires.get(r.id) ?? null)), next_cursor: page.next_cursor };
};

async function withLastFire(db: Kysely<DB>, row: ScheduleRow) {
  return toSchedule(row, (await store.latestFires(db, [row.id])).get(row.id) ?? null);
}

export const createSchedule: Handler<O["createSchedule"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const timing: Timing = {
    cron: body.cron ?? null,
    timezone: body.cron !== undefined ? (body.timezone ?? "UTC") : (body.timezone ?? null),
    interval_seconds: body.interval_seconds ?? null,
  };
  checkTiming(timing);
  const target = await resolveTarget(ctx, project.id, body.target);
  const environmentId = await resolveEnvironmentId(ctx, project.id, body.environment ?? null);
  await assertMaySchedule(ctx, project.id, target, environmentId, "schedule runs in it");
  const now = new Date();
  const t = now.toISOString();
  const row: ScheduleRow = {
    id: newId("sch"),
    project_id: project.id,
    name: body.name,
    target: JSON.stringify(target),
    environment_id: environmentId,
    ...timing,
    enabled: body.enabled ? 1 : 0,
    next_run_at: firstDue(timing, body.enabled, now),
    last_fired_at: null,
    last_error: null,
    created_by: ctx.principal.userId,
    key: null,
    created_at: t,
    updated_at: t,
  };
  await store.insertSchedule(ctx.core.db, row);
  ctx.core.events.emit("schedulesChanged");
  return toSchedule(row);
};

export const getSchedule: Handler<O["getSchedule"]> = async (ctx, { params }) =>
  withLastFire(ctx.core.db, (await resolveSchedule(ctx, params.project, params.scheduleId)).schedule);

export const updateSchedule: Handler<O["updateSchedule"]> = async (ctx, { params, body }) => {
  const { project, schedule } = await resolveSchedule(ctx, params.project, params.scheduleId);
  const expected = expectVersion(ctx, schedule, "schedule");
  let timing = timingOf(schedule);
  if (body.cron !== undefined) timing = { cron: body.cron, timezone: body.timezone ?? timing.timezone ?? "UTC", interval_seconds: null };
  else if (body.interval_seconds !== undefined) timing = { cron: null, timezone: body.timezone ?? null, interval_seconds: body.interval_seconds };
  else if (body.timezone !== undefined) timing = { ...timing, timezone: body.timezone };
  checkTiming(timing);
  const target = body.target
    ? await resolveTarget(ctx, project.id, body.target)
    : readJsonColumn(StoredTarget, schedule.target, `target of schedule ${schedule.id}`);
  const environmentId = body.environment === undefined ? schedule.environment_id : await resolveEnvironmentId(ctx, project.id, body.environment);
  // Whoever changes a schedule answers for the runs it starts from now on. A pause starts nothing, but stops a check
  // someone who may run there set up: refused alike, and said as what it is.
  const pausing = body.enabled === false && Object.entries(body).every(([field, value]) => field === "enabled" || value === undefined);
  await assertMaySchedule(ctx, project.id, target, environmentId, pausing ? "pause a schedule that runs in it" : "change a schedule that runs in it");
  const enabled = body.enabled ?? schedule.enabled === 1;
  const retimed = body.cron !== undefined || body.interval_seconds !== undefined || body.timezone !== undefined || enabled !== (schedule.enabled === 1);
  const now = new Date();
  const next: ScheduleRow = {
    ...schedule,
    name: body.name ?? schedule.name,
    target: JSON.stringify(target),
    environment_id: environmentId,
    ...timing,
    enabled: enabled ? 1 : 0,
    next_run_at: retimed ? firstDue(timing, enabled, now) : schedule.next_run_at,
    created_by: ctx.principal.userId,
    updated_at: nextStamp(schedule.updated_at),
  };
  // The scheduler's own fields are left as they are now (it may have fired since the read), unless retimed.
  const { next_run_at, last_fired_at: _fired, last_error: _error, ...edited } = next;
  if (!(await store.updateSchedule(ctx.core.db, schedule.id, retimed ? { ...edited, next_run_at } : edited, expected)))
    throw staleVersion("schedule", schedule);
  ctx.core.events.emit("schedulesChanged");
  return withLastFire(ctx.core.db, next);
};

export const deleteSchedule: Handler<O["deleteSchedule"]> = async (ctx, { params }) => {
  const { project, schedule } = await resolveSchedule(ctx, params.project, params.scheduleId);
  const expected = expectVersion(ctx, schedule, "schedule");
  // A schedule that runs in a protected environment (a production check an owner set up) is stopped only by
  // whoever may set it up: as for changing it.
  await assertMaySchedule(
    ctx,
    project.id,
    readJsonColumn(StoredTarget, schedule.target, `target of schedule ${schedule.id}`),
    schedule.environment_id,
    "delete a schedule that runs in it",
  );
  if (!(await store.deleteSchedule(ctx.core.db, schedule.id, expected)) && expected !== undefined) throw staleVersion("schedule", schedule);
};

// ---- firing ----

class TakenElsewhere extends Error {}

/** The principal a schedule's runs are started as: its author, with their role now, trigger "schedule". */
async function principalOf(core: Core, row: ScheduleRow, workspaceId: string): Promise<Principal | null> {
  const m = await findMembership(core.db, workspaceId, row.created_by);
  if (!m) return null;
  return { userId: row.created_by, workspaceId, role: m.role, via: "operator", keyId: null, trigger: "schedule" };
}

export interface Fired {
  scheduleId: string;
  dueAt: string;
  firedAt: string;
  runId?: string;
  groupRunId?: string;
  error?: string;
  /** Why the due time was skipped (the previous run or group run had not ended). */
  skipped?: string;
}

/**
 * Why a due time now would pile onto the schedule's previous run or group run (the latest one a due time started,
 * whatever the target is now), or null when that has ended.
 */
async function previousNotEnded(db: Kysely<DB>, scheduleId: string): Promise<string | null> {
  const last = await store.latestStartedFire(db, scheduleId);
  if (!last) return null;
  if (last.group_run_id !== null) {
    const gr = await runs.readGroupRun(db, last.group_run_id);
    // Its verdict is stored when it ends; a sequential one may have nothing open between one run and the next.
    if (gr && gr.status === null && (gr.pending !== "[]" || (await runs.groupRunHasOpenRuns(db, gr.id, gr.project_id))))
      return `the schedule's previous group run ${gr.id} (due ${last.due_at}) has not ended`;
  }
  if (last.run_id !== null) {
    const status = await runs.runStatus(db, last.run_id);
    if (status === "queued" || status === "running") return `the schedule's previous run ${last.run_id} (due ${last.due_at}) is still ${status}`;
  }
  return null;
}

/**
 * Fires every schedule due at `now`: for each, takes its due time (once across nodes), moves it to its next due
 * time after now (so missed ticks are not fired one by one: at most one catch-up) and starts its runs in the
 * same transaction. A tick that cannot start anything is recorded with why, and raises schedule_failed; one at
 * which the schedule's previous run or group run has not ended is skipped, recorded with why, and raises nothing.
 */
export async function fireDueSchedules(core: Core, now: Date, limit = 100): Promise<Fired[]> {
  const due = await store.dueSchedules(core.db, now.toISOString(), limit);
  const out: Fired[] = [];
  for (const row of due) {
    const fired = await fireSchedule(core, row, now);
    if (fired) out.push(fired);
  }
  if (out.some((f) => f.runId || f.groupRunId)) core.events.emit("runQueued");
  return out;
}

/**
 * Fires the due time `row` says the schedule has (as this node read it, possibly stale): null when another node
 * (or an earlier call) already took that due time, or the schedule has moved on.
 */
export async function fireSchedule(core: Core, row: ScheduleRow, now: Date): Promise<Fired | null> {
  const dueAt = row.next_run_at;
  if (dueAt === null) return null;
  const firedAt = new Date().toISOString();
  const next = nextDue(timingOf(row), now, new Date(dueAt))?.toISOString() ?? null;
  const project = await store.projectWorkspace(core.db, row.project_id);
  if (!project) return null;
  const principal = await principalOf(core, row, project.workspace_id);
  const ctx: OpContext = {
    core,
    principal: principal ?? { userId: row.created_by, workspaceId: project.workspace_id, role: "member", via: "operator", keyId: null, trigger: "schedule" },
    publicUrl: () => configuredAddress(core.config),
  };
  const claim = async (trx: Kysely<DB>) => {
    if (
      !(await store.claimFire(trx, { schedule_id: row.id, due_at: dueAt, fired_at: firedAt, run_id: null, group_run_id: null, error: null }, next, firedAt))
    ) {
      throw new TakenElsewhere();
    }
  };
  const target = readJsonColumnOr(StoredTarget, row.target, null);
  try {
    const started = await core.db.transaction().execute(async (trx): Promise<{ runId?: string; groupRunId?: string; skipped?: string }> => {
      await claim(trx);
      // Runs do not pile up: a check slower than its schedule runs back to back, and its alert state follows the
      // runs in the order they were due. A skip is no failure: it neither raises nor re-arms schedule_failed.
      const busy = await previousNotEnded(trx, row.id);
      if (busy !== null) {
        await store.recordFireSkipped(trx, row.id, dueAt, busy);
        return { skipped: busy };
      }
      if (!principal) throw conflict("the member who last changed the schedule is no longer in the workspace");
      if (!target) throw conflict("the schedule's target is damaged");
      const what = await targetAutomations(trx, row.project_id, target);
      let result: { runId?: string; groupRunId?: string };
      if ("automation" in target) {
        const [run] = await enqueueRuns(ctx, trx, {
          projectId: row.project_id,
          groupRunId: null,
          ...NO_RUN_OPTIONS,
          environmentId: row.environment_id ?? what.automations[0]?.environment_id ?? null,
          scheduleId: row.id,
          automations: what.automations,
        });
        result = { runId: run?.id };
      } else {
        const gr = await startGroupRun(ctx, trx, {
          projectId: row.project_id,
          group: what.group ?? { id: null, name: row.name },
          options: { ...NO_RUN_OPTIONS, environmentId: row.environment_id, scheduleId: row.id },
          automations: what.automations,
          // A sequential group runs in order when its schedule starts it too.
          mode: what.order?.mode,
          stopOnFailure: what.order?.stopOnFailure,
        });
        result = { groupRunId: gr.id };
      }
      await store.recordFireResult(trx, row.id, dueAt, { run_id: result.runId ?? null, group_run_id: result.groupRunId ?? null, error: null });
      await new AlertRecorder(core, trx, firedAt).rearm(fireSubject(row));
      return result;
    });
    return { scheduleId: row.id, dueAt, firedAt, ...started };
  } catch (e) {
    if (e instanceof TakenElsewhere) return null;
    const error = e instanceof AppError ? e.message : `could not start the runs: ${(e as Error).message}`;
    let queued = 0;
    try {
      await core.db.transaction().execute(async (trx) => {
        await claim(trx);
        await store.recordFireResult(trx, row.id, dueAt, { error });
        const recorder = new AlertRecorder(core, trx, firedAt);
        await recorder.observe(fireSubject(row), "failing", null, { event: "schedule_failed", error });
        queued = recorder.queued;
      });
    } catch (again) {
      if (again instanceof TakenElsewhere) return null;
      throw again;
    }
    if (queued > 0) core.events.emit("alertsQueued");
    return { scheduleId: row.id, dueAt, firedAt, error };
  }
}

/**
 * Whether a schedule could start its runs is alert state of its own: schedule_failed once, until it starts runs
 * again (which re-arms it silently: that is no news about what it runs).
 */
const fireSubject = (row: ScheduleRow) => ({
  key: `schedule-fire:${row.id}`,
  projectId: row.project_id,
  kind: "schedule" as const,
  id: row.id,
  name: row.name,
  environmentId: row.environment_id,
});

/** The soonest due time of any enabled schedule (the scheduler sleeps until then, at most a second). */
export async function soonestDue(core: Core): Promise<string | null> {
  return store.soonestDue(core.db);
}
