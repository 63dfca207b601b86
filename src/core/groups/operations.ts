// Groups: ordered sets of automations, run together under one group run.
import type { Selectable } from "kysely";
import type { GroupTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { conflict, invalid } from "../../manifest/errors";
import type { OpContext } from "../context";
import type { Handler } from "../handler";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import { startOnce } from "../idempotency";
import { StringList } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { resolveGroup, resolveProject } from "../scope";
import { resolveEnvironmentId } from "../automations/operations";
import { runOptions, startGroupRun } from "../runs/operations";
import * as automations from "../automations/store";
import * as store from "./store";

type O = typeof ops;
type GroupRow = Selectable<GroupTable>;

const automationIdsOf = (row: Pick<GroupRow, "id" | "automation_ids">) => readJsonColumn(StringList, row.automation_ids, `automation_ids of group ${row.id}`);
const toGroup = (row: GroupRow) => ({ ...row, automation_ids: automationIdsOf(row), key: row.key ?? null, stop_on_failure: row.stop_on_failure === 1 });

/** Group names are unique within a project: a second one is refused, naming the first. */
async function assertNameFree(ctx: OpContext, projectId: string, name: string, exceptId?: string): Promise<void> {
  const [other] = (await store.groupsNamed(ctx.core.db, projectId, name, 2)).filter((g) => g.id !== exceptId);
  if (other) throw conflict(`a group named "${name}" already exists in this project (${other.id}): choose another name`);
}

/**
 * Every entry must name an automation of the project, by id or exact name (names are unique in a project): the
 * group keeps their ids. Duplicates are refused so order stays meaningful.
 */
async function checkAutomationIds(ctx: OpContext, projectId: string, refs: string[]): Promise<string[]> {
  if (refs.length === 0) return refs;
  const found = await automations.existingAutomationIds(ctx.core.db, projectId, refs);
  const ids: string[] = [];
  const missing: { ref: string; i: number }[] = [];
  for (const [i, ref] of refs.entries()) {
    if (found.has(ref)) {
      ids.push(ref);
      continue;
    }
    const [named] = await automations.automationsNamed(ctx.core.db, projectId, ref, 1);
    if (named) ids.push(named.id);
    else missing.push({ ref, i });
  }
  if (missing.length > 0) {
    throw invalid(
      "automation_ids names automations that do not exist in this project",
      missing.map(({ ref, i }) => ({ path: `automation_ids.${i}`, message: `unknown automation "${ref}" (neither an id nor an exact name in this project)` })),
    );
  }
  const dup = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (dup >= 0) throw invalid(`automation ${refs[dup]} is listed twice`, [{ path: `automation_ids.${dup}`, message: `duplicate of ${ids[dup]}` }]);
  return ids;
}

export const listGroups: Handler<O["listGroups"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  return fetchPage(store.groupsQuery(ctx.core.db, project.id), "groups", query, toGroup);
};

export const createGroup: Handler<O["createGroup"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const ids = await checkAutomationIds(ctx, project.id, body.automation_ids);
  await assertNameFree(ctx, project.id, body.name);
  const t = nowIso();
  const row: GroupRow = {
    id: newId("grp"),
    project_id: project.id,
    name: body.name,
    description: body.description ?? "",
    automation_ids: JSON.stringify(ids),
    key: null,
    mode: body.mode ?? "parallel",
    stop_on_failure: body.stop_on_failure ? 1 : 0,
    created_at: t,
    updated_at: t,
  };
  await store.insertGroup(ctx.core.db, row);
  return toGroup(row);
};

export const getGroup: Handler<O["getGroup"]> = async (ctx, { params }) => toGroup((await resolveGroup(ctx, params.project, params.groupId)).group);

export const updateGroup: Handler<O["updateGroup"]> = async (ctx, { params, body }) => {
  const { project, group } = await resolveGroup(ctx, params.project, params.groupId);
  const expected = expectVersion(ctx, group, "group");
  if (body.name !== undefined && body.name !== group.name) await assertNameFree(ctx, project.id, body.name, group.id);
  const next: GroupRow = {
    ...group,
    name: body.name ?? group.name,
    description: body.description ?? group.description,
    automation_ids: body.automation_ids ? JSON.stringify(await checkAutomationIds(ctx, project.id, body.automation_ids)) : group.automation_ids,
    mode: body.mode ?? group.mode,
    stop_on_failure: body.stop_on_failure === undefined ? group.stop_on_failure : body.stop_on_failure ? 1 : 0,
    updated_at: nextStamp(group.updated_at),
  };
  if (!(await store.updateGroup(ctx.core.db, group.id, next, expected))) throw staleVersion("group", group);
  return toGroup(next);
};

export const deleteGroup: Handler<O["deleteGroup"]> = async (ctx, { params }) => {
  const { group } = await resolveGroup(ctx, params.project, params.groupId);
  const expected = expectVersion(ctx, group, "group");
  if (!(await store.deleteGroup(ctx.core.db, group.id, expected)) && expected !== undefined) throw staleVersion("group", group);
};

export const runGroup: Handler<O["runGroup"]> = async (ctx, { params, body }) => {
  const { project, group } = await resolveGroup(ctx, params.project, params.groupId);
  const ids = automationIdsOf(group);
  const options = runOptions(body.environment === undefined ? null : await resolveEnvironmentId(ctx, project.id, body.environment), body);
  const { answer, started } = await startOnce(ctx, async (trx) => {
    const runnable = await automations.runnableAmong(trx, project.id, ids);
    if (runnable.length === 0) throw conflict("the group has no automations that can run (none, or all disabled)");
    return startGroupRun(ctx, trx, {
      projectId: project.id,
      group,
      automations: runnable,
      options,
      mode: group.mode,
      stopOnFailure: group.stop_on_failure === 1,
    });
  });
  if (started) ctx.core.events.emit("runQueued");
  return answer;
};
