// cancel_group_run: a group run stopped as a whole — its queued and running runs cancelled as cancel_run cancels
// one, a sequential one's automations not queued yet recorded as not run, and the group run ended cancelled.
import type { ops } from "../../manifest";
import { conflict, notFound } from "../../manifest/errors";
import { assertMayCancelIn } from "../environments/protection";
import type { Handler } from "../handler";
import { resolveProject } from "../scope";
import { cancelRunsWhere, groupRunDetail, settleCancelledGroupRun, settleGroupRuns, tellRunsCancelled } from "./operations";
import { stopSequentialGroupRuns } from "./sequence";
import * as store from "./store";

type O = typeof ops;

export const cancelGroupRun: Handler<O["cancelGroupRun"]> = async (ctx, { params }) => {
  const project = await resolveProject(ctx, params.project);
  const head = await store.findGroupRun(ctx.core.db, project.id, params.groupRunId);
  if (!head) throw notFound("group run");
  if (head.status !== null) throw conflict(`the group run has already finished (${head.status})`);
  await assertMayCancelIn(ctx, ctx.core.db, [head.environment_id, ...(await store.environmentsOfGroupRun(ctx.core.db, head.id))]);
  const cancelled = await ctx.core.db.transaction().execute(async (trx) => {
    // Held first: its next sequential run is not queued, nor is it ended, behind this transaction's back.
    if (!(await store.holdUnendedGroupRun(trx, head.id))) return null;
    const pending = (await store.readGroupRun(trx, head.id))?.pending ?? "[]";
    // Before its runs are cancelled, so that its automations not queued yet say why they did not run.
    await stopSequentialGroupRuns(ctx.core, trx, [head.id], "not run: the group run was cancelled");
    const runIds = await cancelRunsWhere(ctx, trx, { groupRunId: head.id }, "cancelled by request with its group run", { tellAfterCommit: true });
    if (runIds.length === 0 && pending === "[]") {
      // Its last run ended and its verdict was not stored yet: stored now, it is what the refusal names.
      await settleGroupRuns(trx, [head.id]);
      return null;
    }
    await settleCancelledGroupRun(trx, head.id);
    return runIds;
  });
  if (cancelled === null) {
    const now = await store.readGroupRun(ctx.core.db, head.id);
    throw conflict(`the group run has already finished${now?.status ? ` (${now.status})` : ""}`);
  }
  // Told once committed: the engines stop its running runs, and long-polls on it or its runs answer.
  tellRunsCancelled(ctx.core, cancelled);
  return groupRunDetail(ctx, project.id, head.id);
};
