// All of a feature's automations at once: activate its drafts, or run every one that can run under one group run.
import type { ops } from "../../manifest";
import { FEATURE_RUN_MAX } from "../../manifest/define";
import { conflict } from "../../manifest/errors";
import { resolveEnvironmentId, withHealth } from "../automations/operations";
import * as automations from "../automations/store";
import type { Handler } from "../handler";
import { startOnce } from "../idempotency";
import { runOptions, startGroupRun } from "../runs/operations";
import { resolveFeature } from "../scope";
import { nowIso } from "../shared/time";

type O = typeof ops;

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const activateFeatureDrafts: Handler<O["activateFeatureDrafts"]> = async (ctx, { params }) => {
  const { project, feature } = await resolveFeature(ctx, params.project, params.feature);
  // As activating each by hand would: the automation counts as edited, so generating again keeps it.
  const rows = await automations.updateFeatureDrafts(ctx.core.db, project.id, feature.id, { status: "active", edited: 1, updated_at: nowIso() });
  // The order the database lists them in (ORDER BY created_at, id: by code unit, not by locale).
  rows.sort((a, b) => byCodeUnits(a.created_at, b.created_at) || byCodeUnits(a.id, b.id));
  return { feature_id: feature.id, activated: await withHealth(ctx, rows) };
};

export const runFeature: Handler<O["runFeature"]> = async (ctx, { params, body }) => {
  const { project, feature } = await resolveFeature(ctx, params.project, params.feature);
  const options = runOptions(body.environment === undefined ? null : await resolveEnvironmentId(ctx, project.id, body.environment), body);
  const { answer, started } = await startOnce(ctx, async (trx) => {
    const runnable = await automations.runnableFeatureAutomations(trx, project.id, feature.id, FEATURE_RUN_MAX + 1);
    if (runnable.length === 0) throw conflict("the feature has no automations that can run (none, or all disabled)");
    if (runnable.length > FEATURE_RUN_MAX) {
      throw conflict(`the feature has more than ${FEATURE_RUN_MAX} automations that can run; put them in groups and run those`);
    }
    return startGroupRun(ctx, trx, { projectId: project.id, group: { id: null, name: `feature: ${feature.name}` }, automations: runnable, options });
  });
  if (started) ctx.core.events.emit("runQueued");
  return answer;
};
