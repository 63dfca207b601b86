// Retention's queries: the runs past a limit, and removing whole group runs with their runs.
import type { Kysely, Selectable } from "kysely";
import type { DB, RunTable } from "../../db/schema";
import { oneOf } from "../shared/id-lists-store";

type RunStatus = Selectable<RunTable>["status"];
const ACTIVE: RunStatus[] = ["queued", "running"];

/** Up to `limit` ended runs created before `cutoff`, oldest first. */
export async function runsCreatedBefore(db: Kysely<DB>, cutoff: string, limit: number) {
  return db
    .selectFrom("runs")
    .select(["id", "group_run_id"])
    .where("created_at", "<", cutoff)
    .where("status", "not in", ACTIVE)
    .orderBy("created_at")
    .limit(limit)
    .execute();
}

/**
 * Whether any ended run was created before `cutoff`: a seek on the creation index from the oldest run, which is
 * ended unless it is still queued or running, so it costs the same on a million runs as on ten (the frequent check
 * of the age limit).
 */
export async function anyRunCreatedBefore(db: Kysely<DB>, cutoff: string): Promise<boolean> {
  const row = await db
    .selectFrom("runs")
    .select("id")
    .where("created_at", "<", cutoff)
    .where("status", "not in", ACTIVE)
    .orderBy("created_at")
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Automations with more than `max` runs: among `among` (one statement for the automations of a batch of ended runs),
 * or all of them (a scan of the automation index: for the hourly sweep).
 */
export async function automationsOverLimit(db: Kysely<DB>, max: number, among?: string[]): Promise<string[]> {
  if (among?.length === 0) return [];
  let q = db.selectFrom("runs").select("automation_id");
  if (among !== undefined) q = q.where(oneOf(db, "automation_id", among));
  const rows = await q
    .groupBy("automation_id")
    .having((eb) => eb.fn.countAll(), ">", max)
    .execute();
  return rows.map((r) => r.automation_id);
}

/** Up to `limit` of an automation's ended runs beyond its newest `keep` (by created_at alone, so the automation index gives the order). */
export async function runsBeyond(db: Kysely<DB>, automationId: string, keep: number, limit: number) {
  return db
    .selectFrom("runs")
    .select(["id", "group_run_id"])
    .where("automation_id", "=", automationId)
    .where("status", "not in", ACTIVE)
    .orderBy("created_at", "desc")
    .offset(keep)
    .limit(limit)
    .execute();
}

/** Every run of these group runs, with its status. */
export async function runsOfGroupRuns(db: Kysely<DB>, groupRunIds: string[]) {
  if (groupRunIds.length === 0) return [];
  return db.selectFrom("runs").select(["id", "group_run_id", "status"]).where("group_run_id", "in", groupRunIds).execute();
}

/** Deletes runs (ended ones only) and group runs, in the caller's transaction. */
export async function deleteRunsAndGroupRuns(db: Kysely<DB>, runIds: string[], groupRunIds: string[]): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < runIds.length; i += 500) {
    const res = await db
      .deleteFrom("runs")
      .where("id", "in", runIds.slice(i, i + 500))
      .where("status", "not in", ACTIVE)
      .executeTakeFirst();
    deleted += Number(res.numDeletedRows);
  }
  for (let i = 0; i < groupRunIds.length; i += 500) {
    await db
      .deleteFrom("group_runs")
      .where("id", "in", groupRunIds.slice(i, i + 500))
      .execute();
  }
  return deleted;
}

/** Deletes the schedule fires due before `cutoff`, but for each schedule's latest. */
export async function deleteScheduleFiresBefore(db: Kysely<DB>, cutoff: string): Promise<number> {
  const r = await db
    .deleteFrom("schedule_fires")
    .where("due_at", "<", cutoff)
    .where((eb) =>
      eb(
        "due_at",
        "<",
        eb
          .selectFrom("schedule_fires as latest")
          .select((l) => l.fn.max("latest.due_at").as("due_at"))
          .whereRef("latest.schedule_id", "=", "schedule_fires.schedule_id"),
      ),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
