// Features of the product under test, and the records of their test generation.
import type { Selectable } from "kysely";
import type { FeatureTable, GenerationTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import type { Handler } from "../handler";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import { TargetColumn } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { resolveFeature, resolveProject } from "../scope";
import type { OpContext } from "../context";
import * as generations from "../generations/store";
import * as store from "./store";

type O = typeof ops;
type FeatureRow = Selectable<FeatureTable>;
type GenerationRow = Selectable<GenerationTable>;

type LatestGeneration = { id: string; status: GenerationRow["status"] } | null;

function toFeature(row: FeatureRow, latest: LatestGeneration) {
  return {
    ...row,
    target: row.target === null ? null : readJsonColumn(TargetColumn, row.target, `target of feature ${row.id}`),
    latest_generation: latest,
  };
}

/** A feature as answered: with its most recent generation (the one get_generation reads). */
async function answered(ctx: OpContext, row: FeatureRow) {
  const latest = await generations.latestGeneration(ctx.core.db, row.id);
  return toFeature(row, latest ? { id: latest.id, status: latest.status } : null);
}

export const listFeatures: Handler<O["listFeatures"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  const page = await fetchPage(store.featuresQuery(ctx.core.db, project.id), "features", query, (r) => r);
  const latest = await generations.latestGenerationsOf(
    ctx.core.db,
    page.data.map((r) => r.id),
  );
  return { data: page.data.map((r) => toFeature(r, latest.get(r.id) ?? null)), next_cursor: page.next_cursor };
};

export const createFeature: Handler<O["createFeature"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const t = nowIso();
  const row: FeatureRow = {
    id: newId("fea"),
    project_id: project.id,
    name: body.name,
    description: body.description ?? "",
    acceptance_criteria: body.acceptance_criteria ?? "",
    target: body.target ? JSON.stringify(body.target) : null,
    created_at: t,
    updated_at: t,
  };
  await store.insertFeature(ctx.core.db, row);
  return toFeature(row, null);
};

export const getFeature: Handler<O["getFeature"]> = async (ctx, { params }) =>
  answered(ctx, (await resolveFeature(ctx, params.project, params.feature)).feature);

export const updateFeature: Handler<O["updateFeature"]> = async (ctx, { params, body }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  const expected = expectVersion(ctx, feature, "feature");
  const next: FeatureRow = {
    ...feature,
    name: body.name ?? feature.name,
    description: body.description ?? feature.description,
    acceptance_criteria: body.acceptance_criteria ?? feature.acceptance_criteria,
    target: body.target === undefined ? feature.target : body.target === null ? null : JSON.stringify(body.target),
    updated_at: nextStamp(feature.updated_at),
  };
  if (!(await store.updateFeature(ctx.core.db, feature.id, next, expected))) throw staleVersion("feature", feature);
  return answered(ctx, next);
};

export const deleteFeature: Handler<O["deleteFeature"]> = async (ctx, { params }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  const expected = expectVersion(ctx, feature, "feature");
  await ctx.core.db.transaction().execute(async (trx) => {
    const ids = await store.activeGenerationIds(trx, feature.id);
    if (!(await store.deleteFeature(trx, feature.id, expected)) && expected !== undefined) throw staleVersion("feature", feature);
    for (const id of ids) ctx.core.events.emit("generationCancelled", id);
  });
};
