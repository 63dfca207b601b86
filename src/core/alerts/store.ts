// The alert tables (channels, states, the delivery outbox) and what alerting reads of runs: every query alerts
// need, typed by the schema.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { AlertChannelTable, AlertDeliveryTable, AlertStateTable, DB } from "../../db/schema";
import { groupRunHasOpenRuns } from "../runs/store";
import { oneOf } from "../shared/id-lists-store";
import { FINISHED_RUN_COLUMN_NAMES } from "../storage";

type ChannelRow = Selectable<AlertChannelTable>;

export async function findChannel(db: Kysely<DB>, projectId: string, id: string): Promise<ChannelRow | undefined> {
  return db.selectFrom("alert_channels").selectAll().where("project_id", "=", projectId).where("id", "=", id).executeTakeFirst();
}

export async function channelsNamed(db: Kysely<DB>, projectId: string, name: string, limit: number): Promise<ChannelRow[]> {
  return db
    .selectFrom("alert_channels")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("name", "=", name)
    .orderBy("created_at")
    .orderBy("id")
    .limit(limit)
    .execute();
}

export function channelsQuery(db: Kysely<DB>, projectId: string) {
  return db.selectFrom("alert_channels").selectAll().where("project_id", "=", projectId);
}

export async function channelsOfProject(db: Kysely<DB>, projectId: string): Promise<ChannelRow[]> {
  return db.selectFrom("alert_channels").selectAll().where("project_id", "=", projectId).orderBy("created_at").limit(1000).execute();
}

export async function insertChannel(db: Kysely<DB>, row: Insertable<AlertChannelTable>): Promise<void> {
  await db.insertInto("alert_channels").values(row).execute();
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function updateChannel(db: Kysely<DB>, id: string, patch: Updateable<AlertChannelTable>, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.updateTable("alert_channels").set(patch).where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numUpdatedRows) > 0;
}

/** Every Slack channel's id and URL as stored (sealed, or plain in a row written before URLs were sealed). */
export async function slackChannelUrls(db: Kysely<DB>): Promise<{ id: string; url: string | null }[]> {
  return db.selectFrom("alert_channels").select(["id", "url"]).where("kind", "=", "slack").execute();
}

/** Replaces the stored URL while it is still `was` (false when the channel was written meanwhile, or is gone). */
export async function replaceChannelUrl(db: Kysely<DB>, id: string, was: string, url: string): Promise<boolean> {
  const r = await db.updateTable("alert_channels").set({ url }).where("id", "=", id).where("url", "=", was).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Answers false when `ifUpdatedAt` is given and the row no longer has it (changed meanwhile), or is gone. */
export async function deleteChannel(db: Kysely<DB>, id: string, ifUpdatedAt?: string): Promise<boolean> {
  let q = db.deleteFrom("alert_channels").where("id", "=", id);
  if (ifUpdatedAt !== undefined) q = q.where("updated_at", "=", ifUpdatedAt);
  return Number((await q.executeTakeFirst()).numDeletedRows) > 0;
}

// ---- state ----

export async function readState(db: Kysely<DB>, key: string): Promise<Selectable<AlertStateTable> | undefined> {
  return db.selectFrom("alert_states").selectAll().where("subject_key", "=", key).executeTakeFirst();
}

export async function writeState(db: Kysely<DB>, row: Insertable<AlertStateTable>): Promise<void> {
  await db
    .insertInto("alert_states")
    .values(row)
    .onConflict((oc) => oc.column("subject_key").doUpdateSet({ state: row.state, since: row.since, last_run_id: row.last_run_id, updated_at: row.updated_at }))
    .execute();
}

/** When the channel was last sent something about the subject (for reminders). */
export async function lastDeliveryAt(db: Kysely<DB>, channelId: string, subjectKey: string): Promise<string | null> {
  const row = await db
    .selectFrom("alert_deliveries")
    .select("created_at")
    .where("channel_id", "=", channelId)
    .where("subject_key", "=", subjectKey)
    .orderBy("created_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return row?.created_at ?? null;
}

// ---- outbox ----

export async function insertDeliveries(db: Kysely<DB>, rows: Insertable<AlertDeliveryTable>[]): Promise<void> {
  if (rows.length > 0) await db.insertInto("alert_deliveries").values(rows).execute();
}

export function deliveriesQuery(db: Kysely<DB>, channelId: string) {
  return db.selectFrom("alert_deliveries").selectAll().where("channel_id", "=", channelId);
}

export async function findDelivery(db: Kysely<DB>, id: string): Promise<Selectable<AlertDeliveryTable> | undefined> {
  return db.selectFrom("alert_deliveries").selectAll().where("id", "=", id).executeTakeFirst();
}

/** Pending deliveries whose time has come, oldest first (on the (status, next_attempt_at) index), but none of `skipChannels`. */
export async function dueDeliveries(db: Kysely<DB>, now: string, limit: number, skipChannels: readonly string[] = []) {
  let q = db
    .selectFrom("alert_deliveries")
    .innerJoin("alert_channels", "alert_channels.id", "alert_deliveries.channel_id")
    .select([
      "alert_deliveries.id",
      "alert_deliveries.event",
      "alert_deliveries.body",
      "alert_deliveries.attempts",
      "alert_deliveries.next_attempt_at",
      "alert_channels.id as channel_id",
      "alert_channels.kind",
      "alert_channels.url",
      "alert_channels.secret",
      "alert_channels.email_to",
    ])
    .where("alert_deliveries.status", "=", "pending")
    .where("alert_deliveries.next_attempt_at", "<=", now);
  if (skipChannels.length > 0) q = q.where("alert_deliveries.channel_id", "not in", skipChannels);
  return q.orderBy("alert_deliveries.next_attempt_at").limit(limit).execute();
}

/** Takes a delivery for one attempt (no other node sends it meanwhile): moves its next attempt past the attempt's end. */
export async function leaseDelivery(db: Kysely<DB>, id: string, expected: string, until: string): Promise<boolean> {
  const r = await db
    .updateTable("alert_deliveries")
    .set({ next_attempt_at: until })
    .where("id", "=", id)
    .where("status", "=", "pending")
    .where("next_attempt_at", "=", expected)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Records an attempt made under the lease that ends at `leasedUntil`; false when that lease is no longer the row's. */
export async function recordAttempt(db: Kysely<DB>, id: string, leasedUntil: string, patch: Updateable<AlertDeliveryTable>): Promise<boolean> {
  const r = await db
    .updateTable("alert_deliveries")
    .set(patch)
    .where("id", "=", id)
    .where("status", "=", "pending")
    .where("next_attempt_at", "=", leasedUntil)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The soonest pending delivery's time, leaving out the deliveries of `skipChannels`. */
export async function soonestDelivery(db: Kysely<DB>, skipChannels: readonly string[] = []): Promise<string | null> {
  let q = db.selectFrom("alert_deliveries").select("next_attempt_at").where("status", "=", "pending");
  if (skipChannels.length > 0) q = q.where("channel_id", "not in", skipChannels);
  const row = await q.orderBy("next_attempt_at").limit(1).executeTakeFirst();
  return row?.next_attempt_at ?? null;
}

// ---- what alerting reads of runs ----

export async function finishedRuns(db: Kysely<DB>, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom("runs")
    .select(FINISHED_RUN_COLUMN_NAMES)
    .where(oneOf(db, "id", ids))
    .execute();
}

/** Whether the group run still has a run queued or running, or automations a sequential one has yet to queue. */
async function groupRunActive(db: Kysely<DB>, groupRunId: string): Promise<boolean> {
  const gr = await db.selectFrom("group_runs").select(["pending", "project_id"]).where("id", "=", groupRunId).executeTakeFirst();
  if (gr === undefined) return false;
  return gr.pending !== "[]" || (await groupRunHasOpenRuns(db, groupRunId, gr.project_id));
}

export async function groupRunHeads(db: Kysely<DB>, ids: string[]) {
  if (ids.length === 0) return [];
  return db.selectFrom("group_runs").select(["id", "project_id", "group_id", "group_name", "schedule_id"]).where("id", "in", ids).execute();
}

/** The runs of a group run, or null while one of them is still queued or running. */
export async function endedGroupRunMembers(db: Kysely<DB>, groupRunId: string) {
  if (await groupRunActive(db, groupRunId)) return null;
  return db.selectFrom("runs").select(["id", "environment_id", "status", "attempts", "quarantined"]).where("group_run_id", "=", groupRunId).execute();
}

export async function projectBrief(db: Kysely<DB>, id: string) {
  return db.selectFrom("projects").select(["id", "slug", "name"]).where("id", "=", id).executeTakeFirst();
}

export async function environmentName(db: Kysely<DB>, id: string): Promise<string | null> {
  const row = await db.selectFrom("environments").select("name").where("id", "=", id).executeTakeFirst();
  return row?.name ?? null;
}

export async function runnerName(db: Kysely<DB>, id: string): Promise<string | null> {
  const row = await db.selectFrom("runners").select("name").where("id", "=", id).executeTakeFirst();
  return row?.name ?? null;
}

export async function scheduleName(db: Kysely<DB>, id: string): Promise<string | null> {
  const row = await db.selectFrom("schedules").select("name").where("id", "=", id).executeTakeFirst();
  return row?.name ?? null;
}
