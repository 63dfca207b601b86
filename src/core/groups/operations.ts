// Groups: ordered sets of automations, run together under one group run.
import type { Selectable } from "kysely";
import type { GroupTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { conflict, invalid } from "../../manifest/errors";
import type { OpContext } from "../context";
import type { Handler } from "../handler";
import { startOnce } from "../idempotency";
import { StringList } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { resolveGroup, resolveProject } from "../scope";
import { resolveEnvironmentId } from "../automations/operations";
import { startGroupRun } from "../runs/operations";
import * as automations from "../automations/store";
import * as store from "./store";

type O = typeof ops;
type GroupRow = Selectable<GroupTable>;

const automationIdsOf = (row: Pick<GroupRow, "id" | "automation_ids">) => readJsonColumn(StringList, row.automation_ids, `automation_ids of group ${row.id}`);
const toGroup = (row: GroupRow) => ({ ...row, automation_ids: automationIdsOf(row), key: row.key ?? null });

/** Every id must name an automation of the project; duplicates are refused so order stays meaningful. */
async function checkAutomationIds(ctx: OpContext, projectId: string, ids: string[]): Promise<string[]> {
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw invalid(`automation ${dup} is listed twice`, [{ path: "automation_ids", message: `duplicate ${dup}` }]);
  if (ids.length === 0) return ids;
  const found = await automations.existingAutomationIds(ctx.core.db, projectId, ids);
  const missing = ids.map((id, i) => ({ id, i })).filter(({ id }) => !found.has(id));
  if (missing.length > 0) {
    throw invalid(
      "automation_ids names automations that do not exist in this project",
      missing.map(({ id, i }) => ({ path: `automation_ids.${i}`, message: `unknown automation ${id}` })),
    );
  }
  return ids;
}

export const listGroups: Handler<O["listGroups"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  return fetchPage(store.groupsQuery(ctx.core.db, project.id), "groups", query, toGroup);
};

export const createGroup: Handler<O["createGroup"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const ids = await checkAutomationIds(ctx, project.id, body.automation_ids);
  const t = nowIso();
  const row: GroupRow = {
    id: newId("grp"),
    project_id: project.id,
    name: body.name,
    description: body.description ?? "",
    automation_ids: JSON.stringify(ids),
    key: null,
    created_at: t,
    updated_at: t,
  };
  await store.insertGroup(ctx.core.db, row);
  return toGroup(row);
};

export const getGroup: Handler<O["getGroup"]> = async (ctx, { params }) => toGroup((await resolveGroup(ctx, params.project, params.groupId)).group);

export const updateGroup: Handler<O["updateGroup"]> = async (ctx, { params, body }) => {
  const { project, group } = await resolveGroup(ctx, params.project, params.groupId);
  const next: GroupRow = {
    ...group,
    name: body.name ?? group.name,
    description: body.description ?? group.description,
    automation_ids: body.automation_ids ? JSON.stringify(await checkAutomationIds(ctx, project.id, body.automation_ids)) : group.automation_ids,
    updated_at: nowIso(),
  };
  await store.updateGroup(ctx.core.db, group.id, next);
  return toGroup(next);
};

export const deleteGroup: Handler<O["deleteGroup"]> = async (ctx, { params }) => {
  const { group } = await resolveGroup(ctx, params.project, params.groupId);
  await store.deleteGroup(ctx.core.db, group.id);
};

export const runGroup: Handler<O["runGroup"]> = async (ctx, { params, body }) => {
  const { project, group } = await resolveGroup(ctx, params.project, params.groupId);
  const ids = automationIdsOf(group);
  const env = body.environment === undefined ? null : await resolveEnvironmentId(ctx, project.id, body.environment);
  const { answer, started } = await startOnce(ctx, async (trx) => {
    const rows = await automations.automationsAmong(trx, project.id, ids);
    const runnable = ids.map((id) => rows.find((r) => r.id === id)).filter((r): r is (typeof rows)[number] => r !== undefined && r.status !== "disabled");
    if (runnable.length === 0) throw conflict("the group has no automations that can run (none, or all disabled)");
    return startGroupRun(ctx, trx, { projectId: project.id, group, environmentId: env, automations: runnable });
  });
  if (started) ctx.core.events.emit("runQueued");
  return answer;
};
