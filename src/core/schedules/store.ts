// The schedules and schedule_fires tables: every query schedules need, typed by the schema.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { DB, ScheduleFireTable, ScheduleTable } from "../../db/schema";

type ScheduleRow = Selectable<ScheduleTable>;
type FireRow = Selectable<ScheduleFireTable>;

export async function findSchedule(db: Kysely<DB>, projectId: string, id: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom("schedules").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

export async function schedulesNamed(db: Kysely<DB>, projectId: string, name: string, limit: number): Promise<ScheduleRow[]> {
  return db
    .selectFrom("schedules")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .execute();
}

/** The project's schedules, for `fetchPage`. */
export function schedulesQuery(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("schedules").selectAll().where("project_id", "=", projectId);
}

export async function insertSchedule(db: Kysely<DB>, row: Insertable<ScheduleTable>): Promise<void> {
  await db.insertInto("schedules").values(row).execute();
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function updateSchedule(db: Kysely<DB>, id: string, patch: Updateable<ScheduleTable>, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.updateTable("schedules").set(patch).where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function deleteSchedule(db: Kysely<DB>, id: string, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.deleteFrom("schedules").where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
}

/** Enabled schedules due at or before `now`, soonest first (on the (enabled, next_run_at) index). */
export async function dueSchedules(db: Kysely<DB>, now: string, limit: number): Promise<ScheduleRow[]> {
  return db
    .selectFrom("schedules")
    .selectAll()
    .where("enabled", "=", 1)
    .where("next_run_at", "is not", null)
    .where("next_run_at", "<=", now)
    .orderBy("next_run_at")
    .limit(limit)
    .execute();
}

/** The soonest due time of any enabled schedule. */
export async function soonestDue(db: Kysely<DB>): Promise<string | null> {
  const row = await db
    .selectFrom("schedules")
    .select("next_run_at")
    .where("enabled", "=", 1)
    .where("next_run_at", "is not", null)
    .orderBy("next_run_at")
    .limit(1)
    .executeTakeFirst();
  return row?.next_run_at ?? null;
}

/**
 * Takes the due time: inserts its fire row unless one exists (another node took it) and moves the schedule on,
 * only if it still has that due time. True when this caller owns the tick.
 */
export async function claimFire(db: Kysely<DB>, fire: Insertable<ScheduleFireTable>, next: string | null, at: string): Promise<boolean> {
  const inserted = await db
    .insertInto("schedule_fires")
    .values(fire)
    .onConflict((oc) => oc.columns(["schedule_id", "due_at"]).doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return false;
  const moved = await db
    .updateTable("schedules")
    // Bookkeeping, not an edit: updated_at (and so the ETag a Pause or Delete sends back as If-Match) stays.
    .set({ next_run_at: next, last_fired_at: at })
    .where("id", "=", fire.schedule_id)
    .where("next_run_at", "=", fire.due_at)
    .executeTakeFirst();
  return Number(moved.numUpdatedRows) > 0;
}

export async function recordFireResult(
  db: Kysely<DB>,
  scheduleId: string,
  dueAt: string,
  result: { run_id?: string | null; group_run_id?: string | null; error: string | null },
): Promise<void> {
  await db
    .updateTable("schedule_fires")
    .set({ run_id: result.run_id ?? null, group_run_id: result.group_run_id ?? null, error: result.error })
    .where("schedule_id", "=", scheduleId)
    .where("due_at", "=", dueAt)
    .execute();
  await db.updateTable("schedules").set({ last_error: result.error }).where("id", "=", scheduleId).execute();
}

/** Notes on the due time's fire row why it was skipped; the schedule's last_error stays (a skip is no error). */
export async function recordFireSkipped(db: Kysely<DB>, scheduleId: string, dueAt: string, reason: string): Promise<void> {
  await db.updateTable("schedule_fires").set({ skipped: reason }).where("schedule_id", "=", scheduleId).where("due_at", "=", dueAt).execute();
}

/** The latest due time that started a run or a group run (newest first on the (schedule_id, due_at) key). */
export async function latestStartedFire(db: Kysely<DB>, scheduleId: string): Promise<FireRow | undefined> {
  return db
    .selectFrom("schedule_fires")
    .selectAll()
    .where("schedule_id", "=", scheduleId)
    .where((eb) => eb.or([eb("run_id", "is not", null), eb("group_run_id", "is not", null)]))
    .orderBy("due_at", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** The latest fire row of each of these schedules (those never fired have none). */
export async function latestFires(db: Kysely<DB>, scheduleIds: string[]): Promise<Map<string, FireRow>> {
  if (scheduleIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("schedule_fires as f")
    .selectAll("f")
    .where("f.schedule_id", "in", scheduleIds)
    .where("f.due_at", "=", (eb) =>
      eb
        .selectFrom("schedule_fires as g")
        .select((g) => g.fn.max("g.due_at").as("due_at"))
        .whereRef("g.schedule_id", "=", "f.schedule_id"),
    )
    .execute();
  return new Map(rows.map((r) => [r.schedule_id, r]));
}

export async function projectWorkspace(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("projects").select(["workspace_id"]).where("id", "=", projectId).executeTakeFirst();
}
