// What a request names, resolved once for every surface (REST, MCP, CLI, web): a project by id or slug; a
// feature, automation or group by id or exact name, always inside the caller's workspace and project.
import type { Kysely, Selectable } from "kysely";
import type { AlertChannelTable, AutomationTable, DB, FeatureTable, GroupTable, ProjectTable, ScheduleTable } from "../db/schema";
import { AppError, conflict, invalid, notFound } from "../manifest/errors";
import * as alerts from "./alerts/store";
import * as automations from "./automations/store";
import type { OpContext } from "./context";
import * as features from "./features/store";
import * as groups from "./groups/store";
import * as projects from "./projects/store";
import * as schedules from "./schedules/store";

type ProjectRow = Selectable<ProjectTable>;

/** How a kind of named row is found: by id, or every one with exactly a name (up to a limit). */
interface Lookup<R extends { id: string }> {
  prefix: string;
  noun: string;
  byId(db: Kysely<DB>, projectId: string, id: string): Promise<R | undefined>;
  byName(db: Kysely<DB>, projectId: string, name: string, limit: number): Promise<R[]>;
}

const featureLookup: Lookup<Selectable<FeatureTable>> = { prefix: "fea_", noun: "feature", byId: features.findFeature, byName: features.featuresNamed };
const automationLookup: Lookup<Selectable<AutomationTable>> = {
  prefix: "aut_",
  noun: "automation",
  byId: automations.findAutomation,
  byName: automations.automationsNamed,
};
const groupLookup: Lookup<Selectable<GroupTable>> = { prefix: "grp_", noun: "group", byId: groups.findGroup, byName: groups.groupsNamed };
const scheduleLookup: Lookup<Selectable<ScheduleTable>> = {
  prefix: "sch_",
  noun: "schedule",
  byId: schedules.findSchedule,
  byName: schedules.schedulesNamed,
};
const channelLookup: Lookup<Selectable<AlertChannelTable>> = { prefix: "ach_", noun: "alert channel", byId: alerts.findChannel, byName: alerts.channelsNamed };

/** The kinds that may be named; the prefix tells an id from a name in messages. */
const KINDS = { feature: featureLookup, automation: automationLookup, group: groupLookup };
export type NamedKind = keyof typeof KINDS;

/** More twins than this are not listed one by one: the caller needs an id, not the whole list. */
export const LISTED_TWINS = 20;

/** The project named by id or slug in the caller's workspace; another workspace's project is not found. */
export async function resolveProject(ctx: OpContext, ref: string): Promise<ProjectRow> {
  const row = await projects.findProjectByRef(ctx.core.db, ctx.principal.workspaceId, ref);
  if (!row) throw notFound("project");
  return row;
}

/** The rows `ref` names in the project: the one with that id, else every one with exactly that name. */
async function rowsNamed<R extends { id: string }>(ctx: OpContext, lookup: Lookup<R>, projectId: string, ref: string): Promise<R[]> {
  const byId = await lookup.byId(ctx.core.db, projectId, ref);
  if (byId) return [byId];
  return lookup.byName(ctx.core.db, projectId, ref, LISTED_TWINS + 1);
}

/** `where`: where the names were looked for, e.g. `in project shop`. */
function twinsMessage(noun: string, ref: string, where: string, ids: string[]): string {
  const count = ids.length > LISTED_TWINS ? `more than ${LISTED_TWINS}` : String(ids.length);
  const listed = ids.slice(0, LISTED_TWINS).join(", ") + (ids.length > LISTED_TWINS ? ", …" : "");
  return `${count} ${noun}s are named "${ref}" ${where}: give the id (${listed})`;
}

/** A path naming several rows by a name they share: a 409 listing their ids. */
export function twinsConflict(noun: string, ref: string, where: string, ids: string[]): AppError {
  return conflict(twinsMessage(noun, ref, where, ids));
}

/** A filter (`field`) whose value names several rows (up to LISTED_TWINS + 1 ids) is refused, listing their ids. */
export function twinsRefusal(noun: string, ref: string, where: string, ids: string[], field: string): AppError {
  return invalid(twinsMessage(noun, ref, where, ids), [{ path: field, message: `names ${ids.length > LISTED_TWINS ? "many" : ids.length} ${noun}s` }]);
}

/** The one row a path parameter names: none is a 404, several with that name a 409 listing their ids. */
async function resolveNamed<R extends { id: string }>(ctx: OpContext, lookup: Lookup<R>, projectRef: string, ref: string) {
  const project = await resolveProject(ctx, projectRef);
  const rows = await rowsNamed(ctx, lookup, project.id, ref);
  const [row] = rows;
  const { noun, prefix } = lookup;
  if (!row) {
    if (ref.startsWith(prefix)) throw notFound(noun);
    throw new AppError("not_found", `no ${noun} named "${ref}" in project ${projectRef} (give its name exactly, or its id ${prefix}…)`);
  }
  if (rows.length > 1)
    throw conflict(
      twinsMessage(
        noun,
        ref,
        `in project ${projectRef}`,
        rows.map((r) => r.id),
      ),
    );
  return { project, row };
}

export async function resolveFeature(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, featureLookup, projectRef, ref);
  return { project, feature: row };
}

export async function resolveAutomation(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, automationLookup, projectRef, ref);
  return { project, automation: row };
}

export async function resolveGroup(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, groupLookup, projectRef, ref);
  return { project, group: row };
}

export async function resolveSchedule(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, scheduleLookup, projectRef, ref);
  return { project, schedule: row };
}

export async function resolveAlertChannel(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, channelLookup, projectRef, ref);
  return { project, channel: row };
}

/**
 * What a list filter's value (`?feature=`, `?automation=`, `?group=`, `?runner=`, `?group_run=`) means: the id the
 * list is filtered by, and, when the value named no row, how to say so.
 */
export interface ListFilter {
  /** The named row's id; a value that names none is kept as given (the records of a deleted row keep its id). */
  id: string;
  /** Asked only when the list came out empty (see refuseUnknownFilters): the 404 when the value names nothing, else null. */
  namesNothing?: () => Promise<AppError | null>;
}

/** The 404 of a filter naming nothing: which resource, where it was looked for, and which filter, with what it takes. */
export function unknownFilter(noun: string, ref: string, where: string, field: string, takes: string): AppError {
  return new AppError("not_found", `${noun} "${ref}" not found ${where} (filter ${field}: ${takes})`);
}

/** A filter whose value was looked up and names nothing: kept as given, and a 404 if the list comes out empty. */
export function unresolvedFilter(ref: string, error: () => AppError): ListFilter {
  return { id: ref, namesNothing: async () => error() };
}

/**
 * A filtered list that came out empty because a filter names nothing (here: another workspace's rows are never
 * found) is a 404 naming the first such filter, as a path naming nothing is: a misspelt name must not read as "no
 * results". Looked at only when the page is empty, so a filter by a deleted row's id still lists the records that
 * keep it, and a list that has rows costs no more. A filter naming a row with no matching records is an empty page.
 */
export async function refuseUnknownFilters(page: { data: readonly unknown[] }, filters: (ListFilter | undefined)[]): Promise<void> {
  if (page.data.length > 0) return;
  for (const filter of filters) {
    const error = await filter?.namesNothing?.();
    if (error) throw error;
  }
}

/**
 * The filter `field` naming a feature, automation or group by id or exact name in the project. A name shared by
 * several is a 400 naming the filter and listing their ids.
 */
export async function listFilter(ctx: OpContext, kind: NamedKind, projectId: string, ref: string, field: string, projectRef: string): Promise<ListFilter> {
  const lookup: Lookup<{ id: string }> = KINDS[kind];
  const rows = await rowsNamed(ctx, lookup, projectId, ref);
  const where = `in project ${projectRef}`;
  if (rows.length > 1)
    throw twinsRefusal(
      lookup.noun,
      ref,
      where,
      rows.map((r) => r.id),
      field,
    );
  const [row] = rows;
  if (row) return { id: row.id };
  return unresolvedFilter(ref, () => unknownFilter(lookup.noun, ref, where, field, `give its exact name, or its id ${lookup.prefix}…`));
}

/**
 * The id a field of a request's body names (`"feature": "Checkout"`), as a path parameter would: by id or exact
 * name. Nothing named is a 400 on the field (the body is what is wrong, not the URL); a name several share is a 400
 * listing their ids.
 */
export async function bodyRefId(ctx: OpContext, kind: NamedKind, projectId: string, ref: string, field: string, projectRef: string): Promise<string> {
  const lookup: Lookup<{ id: string }> = KINDS[kind];
  const rows = await rowsNamed(ctx, lookup, projectId, ref);
  const where = `in project ${projectRef}`;
  if (rows.length > 1)
    throw twinsRefusal(
      lookup.noun,
      ref,
      where,
      rows.map((r) => r.id),
      field,
    );
  const [row] = rows;
  if (!row)
    throw invalid(`no ${lookup.noun} named "${ref}" ${where} (give its name exactly, or its id ${lookup.prefix}…)`, [
      { path: field, message: `unknown ${lookup.noun}` },
    ]);
  return row.id;
}

/**
 * The id a path parameter names, for keying what the request did (idempotency): the same resource however it
 * was spelled. A value that resolves to nothing, or to several, is kept as given; the operation answers it.
 */
export async function pathParamId(ctx: OpContext, kind: NamedKind, projectId: string, ref: string): Promise<string> {
  const lookup: Lookup<{ id: string }> = KINDS[kind];
  const rows = await rowsNamed(ctx, lookup, projectId, ref);
  return rows.length === 1 && rows[0] ? rows[0].id : ref;
}
