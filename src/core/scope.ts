// What a request names, resolved once for every surface (REST, MCP, CLI, web): a project by id or slug; a
// feature, automation or group by id or exact name, always inside the caller's workspace and project.
import type { Selectable } from "kysely";
import type { AutomationTable, FeatureTable, GroupTable, ProjectTable } from "../db/schema";
import { AppError, conflict, invalid, notFound } from "../manifest/errors";
import type { OpContext } from "./context";
import * as projects from "./projects/store";

type ProjectRow = Selectable<ProjectTable>;
type FeatureRow = Selectable<FeatureTable>;
type AutomationRow = Selectable<AutomationTable>;
type GroupRow = Selectable<GroupTable>;

/** The kinds that may be named; the prefix tells an id from a name in messages. */
const KINDS = {
  feature: { table: "features", prefix: "fea_", noun: "feature" },
  automation: { table: "automations", prefix: "aut_", noun: "automation" },
  group: { table: "groups", prefix: "grp_", noun: "group" },
} as const;
export type NamedKind = keyof typeof KINDS;

/** More twins than this are not listed one by one: the caller needs an id, not the whole list. */
const LISTED_TWINS = 20;

/** The project named by id or slug in the caller's workspace; another workspace's project is not found. */
export async function resolveProject(ctx: OpContext, ref: string): Promise<ProjectRow> {
  const row = await projects.findProjectByRef(ctx.core.db, ctx.principal.workspaceId, ref);
  if (!row) throw notFound("project");
  return row;
}

/** The rows `ref` names in the project: the one with that id, else every one with exactly that name. */
async function rowsNamed(ctx: OpContext, kind: NamedKind, projectId: string, ref: string) {
  const base = () => ctx.core.db.selectFrom(KINDS[kind].table).selectAll().where("project_id", "=", projectId);
  const byId = await base().where("id", "=", ref).executeTakeFirst();
  if (byId) return [byId];
  return base()
    .where("name", "=", ref)
    .orderBy("created_at")
    .orderBy("id")
    .limit(LISTED_TWINS + 1)
    .execute();
}

function twinsMessage(kind: NamedKind, ref: string, projectRef: string, ids: string[]): string {
  const count = ids.length > LISTED_TWINS ? `more than ${LISTED_TWINS}` : String(ids.length);
  const listed = ids.slice(0, LISTED_TWINS).join(", ") + (ids.length > LISTED_TWINS ? ", …" : "");
  return `${count} ${KINDS[kind].noun}s are named "${ref}" in project ${projectRef}: give the id (${listed})`;
}

/** The one row a path parameter names: none is a 404, several with that name a 409 listing their ids. */
async function resolveNamed(ctx: OpContext, kind: NamedKind, projectRef: string, ref: string) {
  const project = await resolveProject(ctx, projectRef);
  const rows = await rowsNamed(ctx, kind, project.id, ref);
  const [row] = rows;
  if (!row) {
    const { noun, prefix } = KINDS[kind];
    if (ref.startsWith(prefix)) throw notFound(noun);
    throw new AppError("not_found", `no ${noun} named "${ref}" in project ${projectRef} (give its name exactly, or its id ${prefix}…)`);
  }
  if (rows.length > 1)
    throw conflict(
      twinsMessage(
        kind,
        ref,
        projectRef,
        rows.map((r) => r.id),
      ),
    );
  return { project, row };
}

export async function resolveFeature(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, "feature", projectRef, ref);
  return { project, feature: row as FeatureRow };
}

export async function resolveAutomation(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, "automation", projectRef, ref);
  return { project, automation: row as AutomationRow };
}

export async function resolveGroup(ctx: OpContext, projectRef: string, ref: string) {
  const { project, row } = await resolveNamed(ctx, "group", projectRef, ref);
  return { project, group: row as GroupRow };
}

/**
 * The id a list filter (`?feature=`, `?automation=`, `?group=`) means. A filter is never a 404: a value that
 * names nothing is kept as given and simply matches nothing (or the records of a deleted one, which keep its
 * id). A name shared by several is a 400 naming the filter and listing their ids.
 */
export async function filterId(ctx: OpContext, kind: NamedKind, projectId: string, ref: string, field: string, projectRef: string): Promise<string> {
  const rows = await rowsNamed(ctx, kind, projectId, ref);
  if (rows.length > 1) {
    const message = twinsMessage(
      kind,
      ref,
      projectRef,
      rows.map((r) => r.id),
    );
    throw invalid(message, [{ path: field, message: `names ${rows.length > LISTED_TWINS ? "many" : rows.length} ${KINDS[kind].noun}s` }]);
  }
  return rows[0]?.id ?? ref;
}

/**
 * The id a path parameter names, for keying what the request did (idempotency): the same resource however it
 * was spelled. A value that resolves to nothing, or to several, is kept as given; the operation answers it.
 */
export async function pathParamId(ctx: OpContext, kind: NamedKind, projectId: string, ref: string): Promise<string> {
  const rows = await rowsNamed(ctx, kind, projectId, ref);
  return rows.length === 1 && rows[0] ? rows[0].id : ref;
}
