// Runs by selection: which automations a request (or a schedule) selects by id or name, tag and feature, and the
// group run that runs them; or a re-run of a group run's automations (only the failed ones when asked).
import type { Selectable, Transaction } from "kysely";
import type { AutomationTable, DB, ProjectTable } from "../../db/schema";
import { FEATURE_RUN_MAX } from "../../manifest/define";
import { conflict, invalid } from "../../manifest/errors";
import type { ops } from "../../manifest";
import type { OpContext } from "../context";
import type { Handler } from "../handler";
import { startOnce } from "../idempotency";
import { StringList, StringMap } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { resolveProject } from "../scope";
import * as automations from "../automations/store";
import * as environments from "../environments/store";
import * as features from "../features/store";
import { runOptions, startGroupRun } from "./operations";
import * as store from "./store";

type AutomationRow = Selectable<AutomationTable>;
type ProjectRow = Selectable<ProjectTable>;

/** What to run: the criteria narrow each other; tags match any of those listed (ignoring case). */
export interface Selection {
  /** Ids or exact names; these run unless disabled (drafts included). */
  automations?: string[];
  tags?: string[];
  /** Id or exact name. */
  feature?: string;
}

const RERUN_STATUSES = ["failed", "error", "timed_out", "cancelled"];

/**
 * The automations a selection names, in order (as listed, else oldest first); tags and a feature alone select only
 * active automations. A name or feature that names nothing is a 400 naming the field.
 */
export async function selectAutomations(db: Transaction<DB>, project: Pick<ProjectRow, "id">, selection: Selection): Promise<AutomationRow[]> {
  const tags = selection.tags?.map((t) => t.toLowerCase());
  let featureId: string | undefined;
  if (selection.feature !== undefined) {
    // Read in the caller's transaction (it holds the connection): by id, else by exact name.
    const ref = selection.feature;
    const found = await features.featuresByRef(db, project.id, ref, 2);
    if (found.length !== 1 || !found[0]) {
      throw invalid(`feature "${ref}" ${found.length > 1 ? "names several features: give its id" : "does not exist in this project"}`, [
        { path: "body.feature", message: found.length > 1 ? "names several features" : "unknown feature" },
      ]);
    }
    featureId = found[0].id;
  }
  let rows: AutomationRow[];
  if (selection.automations !== undefined) {
    rows = [];
    const problems: { path: string; message: string }[] = [];
    for (const [i, ref] of selection.automations.entries()) {
      const [byId] = await automations.automationsAmong(db, project.id, [ref]);
      const found = byId ? [byId] : await automations.automationsNamed(db, project.id, ref, 2);
      const [row] = found;
      if (!row || found.length > 1)
        problems.push({ path: `body.automations.${i}`, message: row ? `several automations are named "${ref}"` : `unknown automation "${ref}"` });
      else if (!rows.some((r) => r.id === row.id)) rows.push(row);
    }
    if (problems.length > 0) throw invalid("automations names automations that do not exist in this project", problems);
    rows = rows.filter((r) => r.status !== "disabled");
  } else {
    rows = await automations
      .automationsQuery(db, project.id, { featureId, tags: selection.tags, status: "active" })
      .orderBy("created_at")
      .orderBy("id")
      .limit(FEATURE_RUN_MAX + 1)
      .execute();
  }
  return rows.filter((r) => {
    if (featureId !== undefined && r.feature_id !== featureId) return false;
    if (tags === undefined || tags.length === 0) return true;
    const own = readJsonColumn(StringList, r.tags, `tags of automation ${r.id}`).map((t) => t.toLowerCase());
    return own.some((t) => tags.includes(t));
  });
}

function describeSelection(s: Selection): string {
  const parts = [
    s.automations ? `${s.automations.length} automation${s.automations.length === 1 ? "" : "s"}` : null,
    s.tags?.length ? `tag ${s.tags.join(", ")}` : null,
    s.feature ? `feature ${s.feature}` : null,
  ].filter((p) => p !== null);
  return `selection: ${parts.join(" · ")}`;
}

export interface SelectionRequest extends Selection {
  from_group_run?: string;
  only_failed?: boolean;
  environment?: string;
  variables?: Record<string, string>;
  secrets?: Record<string, string>;
  metadata?: Record<string, string>;
}

/** Starts one group run of what the request selects (inside the caller's transaction), answered as get_group_run. */
export async function startSelection(ctx: OpContext, trx: Transaction<DB>, project: ProjectRow, body: SelectionRequest) {
  const selects = body.automations !== undefined || (body.tags?.length ?? 0) > 0 || body.feature !== undefined;
  if (body.only_failed && body.from_group_run === undefined) {
    throw invalid("only_failed needs from_group_run", [{ path: "body.only_failed", message: "only with from_group_run" }]);
  }
  if (body.from_group_run !== undefined && selects) {
    throw invalid("give from_group_run or a selection (automations, tags, feature), not both", [
      { path: "body.from_group_run", message: "not with a selection" },
    ]);
  }
  if (body.from_group_run === undefined && !selects) {
    throw invalid("select what to run: automations, tags or feature (or from_group_run)", [{ path: "body", message: "nothing selected" }]);
  }
  const environmentId = async (fallback: string | null) => {
    if (body.environment === undefined) return fallback;
    const env = await environments.findEnvironmentByRef(trx, project.id, body.environment);
    if (!env) throw invalid(`environment "${body.environment}" does not exist in this project`, [{ path: "body.environment", message: "unknown environment" }]);
    return env.id;
  };
  if (body.from_group_run !== undefined) {
    const from = await store.findGroupRun(trx, project.id, body.from_group_run);
    if (!from)
      throw invalid(`group run "${body.from_group_run}" does not exist in this project`, [{ path: "body.from_group_run", message: "unknown group run" }]);
    const runs = await store.listedRunsOfGroupRun(trx, from.id);
    // Its failures are known only once it has ended: re-running "the failed ones" of a group run still going would
    // quietly leave out those that fail later (a CI job whose --watch-timeout ran out, say). Ended as get_group_run
    // says it has: nothing queued or running, nothing left to queue — its stored verdict may follow a moment later,
    // and a CI job that saw the end re-runs at once.
    const open = runs.some((r) => r.status === "queued" || r.status === "running") || (from.status === null && from.pending !== "[]");
    if (body.only_failed && open)
      throw conflict(`group run ${from.id} has not ended: re-run its failures once it has (svc group-runs watch ${from.id} waits for it)`);
    const ids = [...new Set(runs.filter((r) => !body.only_failed || RERUN_STATUSES.includes(r.status)).map((r) => r.automation_id))];
    const runnable = await automations.runnableAmong(trx, project.id, ids);
    if (runnable.length === 0) {
      // `svc test` ran documents, not saved automations: there is nothing saved to run again.
      if (from.trigger === "test")
        throw conflict("nothing to re-run: that group run tested documents (svc test), which are not saved automations; run svc test again");
      throw conflict(
        body.only_failed
          ? "nothing to re-run: no run of that group run failed (or those automations are gone or disabled)"
          : "nothing to re-run: its automations are gone or disabled",
      );
    }
    const options = runOptions(await environmentId(from.environment_id), {
      variables: body.variables ?? readJsonColumn(StringMap, from.variables, `variables of group run ${from.id}`),
      secrets: body.secrets,
      metadata: body.metadata ?? readJsonColumn(StringMap, from.metadata, `metadata of group run ${from.id}`),
    });
    return startGroupRun(ctx, trx, {
      projectId: project.id,
      group: { id: from.group_id, name: from.group_name },
      automations: runnable,
      options,
      mode: from.mode,
      stopOnFailure: from.stop_on_failure === 1,
    });
  }
  const selected = await selectAutomations(trx, project, body);
  if (selected.length === 0)
    throw conflict("the selection has no automations that can run (none match, or all are disabled; tags and feature select active ones)");
  if (selected.length > FEATURE_RUN_MAX) throw conflict(`the selection has more than ${FEATURE_RUN_MAX} automations; narrow it`);
  const options = runOptions(await environmentId(null), body);
  return startGroupRun(ctx, trx, { projectId: project.id, group: { id: null, name: describeSelection(body) }, automations: selected, options });
}

export const runSelection: Handler<(typeof ops)["runSelection"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const { answer, started } = await startOnce(ctx, (trx) => startSelection(ctx, trx, project, body));
  if (started) ctx.core.events.emit("runQueued");
  return answer;
};
