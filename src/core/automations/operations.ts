// Automations: validated steps, status transitions (draft → active ⇄ disabled), and starting runs.
import type { Selectable } from "kysely";
import type { AutomationTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { stepKindProblems } from "../../manifest/automation-format";
import { conflict, invalid } from "../../manifest/errors";
import type { OpContext } from "../context";
import type { Handler } from "../handler";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import { startOnce } from "../idempotency";
import { StepsColumn, StringList } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { findEnvironment } from "../environments/operations";
import { bodyRefId, listFilter, refuseUnknownFilters, resolveAutomation, resolveProject } from "../scope";
import { type Health, healthOfAutomations } from "../history/operations";
import { cancelRunsWhere, enqueueRuns, listRunsPage, runOptions, tellRunsCancelled, toRun } from "../runs/operations";
import * as groups from "../groups/store";
import * as store from "./store";

type O = typeof ops;
export type AutomationRow = Selectable<AutomationTable>;
type Status = AutomationRow["status"];

/** Allowed status changes: drafts are activated (or disabled); active and disabled switch back and forth. */
const TRANSITIONS: Record<Status, Status[]> = {
  draft: ["active", "disabled"],
  active: ["disabled"],
  disabled: ["active"],
};

/** Automations as the API shows them, each with its health read now. */
export async function withHealth(ctx: OpContext, rows: AutomationRow[]) {
  const health = await healthOfAutomations(
    ctx.core,
    rows.map((r) => r.id),
  );
  return rows.map((r) => toAutomation(r, health.get(r.id)));
}

const stepsOf = (row: AutomationRow) => readJsonColumn(StepsColumn, row.steps, `steps of automation ${row.id}`);

const NO_HEALTH: Health = { state: "unknown", last_status: null, runs: 0, pass_rate: null, flips: 0, runs_7d: 0, pass_rate_7d: null };

/** The automation as the API shows it; `health` as read by withHealth (unknown for one that never ran). */
export function toAutomation(row: AutomationRow, health: Health = NO_HEALTH) {
  return {
    id: row.id,
    project_id: row.project_id,
    feature_id: row.feature_id,
    generation_id: row.generation_id,
    name: row.name,
    description: row.description,
    kind: row.kind,
    steps: stepsOf(row),
    environment_id: row.environment_id,
    tags: readJsonColumn(StringList, row.tags, `tags of automation ${row.id}`),
    status: row.status,
    source: row.source,
    key: row.key ?? null,
    timeout_ms: row.timeout_ms,
    retries: row.retries,
    last_run: row.last_run_id && row.last_run_status && row.last_run_at ? { id: row.last_run_id, status: row.last_run_status, at: row.last_run_at } : null,
    quarantined: row.quarantined === 1,
    health,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

async function environmentId(ctx: OpContext, projectId: string, ref: string | null | undefined, field = "environment") {
  if (ref === undefined || ref === null) return ref ?? null;
  const env = await findEnvironment(ctx, projectId, ref);
  if (!env) throw invalid(`environment "${ref}" does not exist in this project`, [{ path: field, message: "unknown environment" }]);
  return env.id;
}

/** The feature a body's `feature` names: by id or exact name, as everywhere (null unlinks). */
async function featureId(ctx: OpContext, projectId: string, ref: string | null | undefined, projectRef: string) {
  if (ref === undefined || ref === null) return ref ?? null;
  return bodyRefId(ctx, "feature", projectId, ref, "body.feature", projectRef);
}

/** Automation names are unique within a project: a second one is refused, naming the first. */
async function assertNameFree(ctx: OpContext, projectId: string, name: string, exceptId?: string): Promise<void> {
  const [other] = (await store.automationsNamed(ctx.core.db, projectId, name, 2)).filter((a) => a.id !== exceptId);
  if (other) throw conflict(`an automation named "${name}" already exists in this project (${other.id}): choose another name`);
}

export const listAutomations: Handler<O["listAutomations"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  const filter: store.AutomationFilter = {};
  const feature = query.feature ? await listFilter(ctx, "feature", project.id, query.feature, "feature", params.project) : undefined;
  if (feature) filter.featureId = feature.id;
  if (query.status) filter.status = query.status;
  if (query.kind) filter.kind = query.kind;
  if (query.q) filter.text = query.q;
  if (query.tag && query.tag.length > 0) filter.tags = query.tag;
  const groupFilter = query.group ? await listFilter(ctx, "group", project.id, query.group, "group", params.project) : undefined;
  if (groupFilter) {
    const group = await groups.findGroup(ctx.core.db, project.id, groupFilter.id);
    const ids = group ? readJsonColumn(StringList, group.automation_ids, `automation_ids of group ${group.id}`) : [];
    if (ids.length === 0) {
      const empty = { data: [], next_cursor: null };
      await refuseUnknownFilters(empty, [feature, groupFilter]);
      return empty;
    }
    filter.ids = ids;
  }
  const page = await fetchPage(store.automationsQuery(ctx.core.db, project.id, filter), "automations", query, (r) => r);
  await refuseUnknownFilters(page, [feature, groupFilter]);
  return { data: await withHealth(ctx, page.data), next_cursor: page.next_cursor };
};

export const createAutomation: Handler<O["createAutomation"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  await assertNameFree(ctx, project.id, body.name);
  const t = nowIso();
  const row: AutomationRow = {
    id: newId("aut"),
    project_id: project.id,
    feature_id: await featureId(ctx, project.id, body.feature, params.project),
    generation_id: null,
    name: body.name,
    description: body.description ?? "",
    kind: body.kind,
    steps: JSON.stringify(body.steps),
    environment_id: await environmentId(ctx, project.id, body.environment),
    tags: JSON.stringify(body.tags ?? []),
    status: body.status ?? "active",
    source: "manual",
    edited: 0,
    timeout_ms: body.timeout_ms ?? ctx.core.config.runner.default_timeout_ms,
    retries: body.retries ?? 0,
    last_run_id: null,
    last_run_status: null,
    last_run_at: null,
    key: null,
    quarantined: 0,
    created_at: t,
    updated_at: t,
  };
  await store.insertAutomation(ctx.core.db, row);
  return toAutomation(row);
};

export const getAutomation: Handler<O["getAutomation"]> = async (ctx, { params }) => {
  const [automation] = await withHealth(ctx, [(await resolveAutomation(ctx, params.project, params.automationId)).automation]);
  if (!automation) throw conflict("the automation could not be read");
  return automation;
};

export const updateAutomation: Handler<O["updateAutomation"]> = async (ctx, { params, body }) => {
  const { project, automation } = await resolveAutomation(ctx, params.project, params.automationId);
  const expected = expectVersion(ctx, automation, "automation");
  if (body.name !== undefined && body.name !== automation.name) await assertNameFree(ctx, project.id, body.name, automation.id);
  const kind = body.kind ?? automation.kind;
  const steps = body.steps ?? stepsOf(automation);
  const problems = stepKindProblems(kind, steps);
  if (problems.length > 0) throw invalid("steps do not suit the automation's kind", problems);
  if (body.status && body.status !== automation.status && !TRANSITIONS[automation.status].includes(body.status)) {
    throw conflict(`an automation cannot go from ${automation.status} to ${body.status}`);
  }
  const next: AutomationRow = {
    ...automation,
    name: body.name ?? automation.name,
    description: body.description ?? automation.description,
    kind,
    steps: JSON.stringify(steps),
    feature_id: body.feature === undefined ? automation.feature_id : await featureId(ctx, project.id, body.feature, params.project),
    environment_id: body.environment === undefined ? automation.environment_id : await environmentId(ctx, project.id, body.environment),
    tags: body.tags ? JSON.stringify(body.tags) : automation.tags,
    status: body.status ?? automation.status,
    timeout_ms: body.timeout_ms ?? automation.timeout_ms,
    retries: body.retries ?? automation.retries,
    quarantined: body.quarantined === undefined ? automation.quarantined : body.quarantined ? 1 : 0,
    // A person's change keeps a generated automation when the feature is generated again.
    edited: 1,
    updated_at: nextStamp(automation.updated_at),
  };
  if (!(await store.updateAutomation(ctx.core.db, automation.id, next, expected))) throw staleVersion("automation", automation);
  const [answer] = await withHealth(ctx, [next]);
  if (!answer) throw conflict("the automation could not be read");
  return answer;
};

export const deleteAutomation: Handler<O["deleteAutomation"]> = async (ctx, { params }) => {
  const { project, automation } = await resolveAutomation(ctx, params.project, params.automationId);
  const expected = expectVersion(ctx, automation, "automation");
  const cancelled = await ctx.core.db.transaction().execute(async (trx) => {
    const runIds = await cancelRunsWhere(ctx, trx, { automationId: automation.id }, "the automation was deleted", { tellAfterCommit: true });
    if (!(await store.deleteAutomation(trx, automation.id, expected)) && expected !== undefined) throw staleVersion("automation", automation);
    for (const g of await groups.groupMemberLists(trx, project.id)) {
      const ids = readJsonColumn(StringList, g.automation_ids, `automation_ids of group ${g.id}`);
      if (ids.includes(automation.id)) {
        await groups.updateGroup(trx, g.id, { automation_ids: JSON.stringify(ids.filter((i) => i !== automation.id)), updated_at: nowIso() });
      }
    }
    return runIds;
  });
  // Told once committed: an engine or a runner's heartbeat that reads at once sees the runs ended.
  tellRunsCancelled(ctx.core, cancelled);
};

export const runAutomation: Handler<O["runAutomation"]> = async (ctx, { params, body }) => {
  const { project, automation } = await resolveAutomation(ctx, params.project, params.automationId);
  if (automation.status === "disabled") throw conflict("the automation is disabled; activate it before running it");
  const env = body.environment === undefined ? automation.environment_id : await environmentId(ctx, project.id, body.environment);
  const options = runOptions(env, body);
  const { answer, started } = await startOnce(ctx, async (trx) => {
    const [run] = await enqueueRuns(ctx, trx, { projectId: project.id, groupRunId: null, automations: [automation], ...options });
    if (!run) throw conflict("the run could not be queued");
    return toRun(run, false);
  });
  if (started) ctx.core.events.emit("runQueued");
  return answer;
};

export const listAutomationRuns: Handler<O["listAutomationRuns"]> = async (ctx, { params, query }) => {
  const { project, automation } = await resolveAutomation(ctx, params.project, params.automationId);
  return listRunsPage(ctx, project.id, { ...query, automation: automation.id });
};

export { environmentId as resolveEnvironmentId };
