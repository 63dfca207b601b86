// Features of the product under test, and the records of their test generation.
import type { Selectable } from "kysely";
import type { FeatureTable, GenerationTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { conflict, notFound } from "../../manifest/errors";
import type { OpContext } from "../context";
import type { Handler } from "../handler";
import { parseJson } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { resolveFeature, resolveProject } from "../scope";

type O = typeof ops;
type FeatureRow = Selectable<FeatureTable>;
type GenerationRow = Selectable<GenerationTable>;

function toFeature(row: FeatureRow) {
  return { ...row, target: parseJson(row.target, null) };
}

export function toGeneration(row: GenerationRow) {
  return {
    ...row,
    status: row.status as "queued",
    strategy: row.strategy as "auto",
    progress: parseJson(row.progress, { stage: "queued", done: 0, total: 0 }),
    warnings: parseJson(row.warnings, []),
    automation_ids: parseJson<string[]>(row.automation_ids, []),
  };
}

export const listFeatures: Handler<O["listFeatures"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  return fetchPage(ctx.core.db.selectFrom("features").selectAll().where("project_id", "=", project.id), "features", query, toFeature);
};

export const createFeature: Handler<O["createFeature"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const t = nowIso();
  const row: FeatureRow = {
    id: newId("fea"), project_id: project.id, name: body.name, description: body.description ?? "",
    acceptance_criteria: body.acceptance_criteria ?? "", target: body.target ? JSON.stringify(body.target) : null,
    created_at: t, updated_at: t,
  };
  await ctx.core.db.insertInto("features").values(row).execute();
  return toFeature(row);
};

export const getFeature: Handler<O["getFeature"]> = async (ctx, { params }) =>
  toFeature((await resolveFeature(ctx, params.project, params.feature)).feature);

export const updateFeature: Handler<O["updateFeature"]> = async (ctx, { params, body }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  const next: FeatureRow = {
    ...feature,
    name: body.name ?? feature.name,
    description: body.description ?? feature.description,
    acceptance_criteria: body.acceptance_criteria ?? feature.acceptance_criteria,
    target: body.target === undefined ? feature.target : body.target === null ? null : JSON.stringify(body.target),
    updated_at: nowIso(),
  };
  await ctx.core.db.updateTable("features").set(next).where("id", "=", feature.id).execute();
  return toFeature(next);
};

export const deleteFeature: Handler<O["deleteFeature"]> = async (ctx, { params }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  await ctx.core.db.transaction().execute(async (trx) => {
    const active = await trx.selectFrom("generations").select("id").where("feature_id", "=", feature.id).where("status", "in", ["queued", "running"]).execute();
    for (const g of active) ctx.core.events.emit("generationCancelled", g.id);
    await trx.deleteFrom("features").where("id", "=", feature.id).execute();
  });
};

async function latestGeneration(ctx: OpContext, featureId: string) {
  return ctx.core.db.selectFrom("generations").selectAll().where("feature_id", "=", featureId)
    .orderBy("created_at", "desc").orderBy("id", "desc").limit(1).executeTakeFirst();
}

export const startGeneration: Handler<O["startGeneration"]> = async (ctx, { params, body }) => {
  const { project, feature } = await resolveFeature(ctx, params.project, params.feature);
  const row = await ctx.core.db.transaction().execute(async (trx) => {
    const active = await trx.selectFrom("generations").select("id").where("feature_id", "=", feature.id).where("status", "in", ["queued", "running"]).executeTakeFirst();
    if (active) throw conflict(`a generation for this feature is already in progress (${active.id}); cancel it or wait for it`);
    const t = nowIso();
    const g: GenerationRow = {
      id: newId("gen"), project_id: project.id, feature_id: feature.id, status: "queued", strategy: body.strategy,
      progress: JSON.stringify({ stage: "queued", done: 0, total: 0 }), warnings: "[]", automation_ids: "[]",
      result: null, error: null, started_at: null, finished_at: null, created_at: t, updated_at: t,
    };
    await trx.insertInto("generations").values(g).execute();
    return g;
  });
  ctx.core.events.emit("generationQueued");
  return toGeneration(row);
};

export const getGeneration: Handler<O["getGeneration"]> = async (ctx, { params }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  const g = await latestGeneration(ctx, feature.id);
  if (!g) throw notFound("generation (none was started for this feature)");
  return toGeneration(g);
};

export const cancelGeneration: Handler<O["cancelGeneration"]> = async (ctx, { params }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  const g = await latestGeneration(ctx, feature.id);
  if (!g) throw notFound("generation (none was started for this feature)");
  if (g.status !== "queued" && g.status !== "running") throw conflict(`the generation is already ${g.status}`);
  const t = nowIso();
  const res = await ctx.core.db.updateTable("generations")
    .set({ status: "cancelled", finished_at: t, updated_at: t, result: "cancelled by request" })
    .where("id", "=", g.id).where("status", "in", ["queued", "running"]).executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw conflict("the generation finished before it could be cancelled");
  ctx.core.events.emit("generationCancelled", g.id);
  const next = await ctx.core.db.selectFrom("generations").selectAll().where("id", "=", g.id).executeTakeFirstOrThrow();
  return toGeneration(next);
};
