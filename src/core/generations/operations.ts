// Operations on a feature's test generation: start one, read the latest, cancel it. The job itself runs in
// src/generation; its database side is queue.ts.
import type { Selectable } from "kysely";
import type { GenerationTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { conflict, notFound } from "../../manifest/errors";
import { TERMINAL_GENERATION_STATUSES } from "../../manifest/records";
import { resolveFeature } from "../scope";
import type { Handler } from "../handler";
import { startOnce } from "../idempotency";
import { ProgressColumn, StringList, WarningsColumn } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { nowIso } from "../shared/time";
import * as store from "./store";

type O = typeof ops;
type GenerationRow = Selectable<GenerationTable>;

export function toGeneration(row: GenerationRow) {
  return {
    ...row,
    progress: readJsonColumn(ProgressColumn, row.progress, `progress of generation ${row.id}`),
    warnings: readJsonColumn(WarningsColumn, row.warnings, `warnings of generation ${row.id}`),
    automation_ids: readJsonColumn(StringList, row.automation_ids, `automation_ids of generation ${row.id}`),
  };
}

export const startGeneration: Handler<O["startGeneration"]> = async (ctx, { params, body }) => {
  const { project, feature } = await resolveFeature(ctx, params.project, params.feature);
  const { answer, started } = await startOnce(ctx, async (trx) => {
    const active = await store.activeGeneration(trx, feature.id);
    if (active) throw conflict(`a generation for this feature is already in progress (${active.id}); cancel it or wait for it`);
    const t = nowIso();
    const g: GenerationRow = {
      id: newId("gen"),
      project_id: project.id,
      feature_id: feature.id,
      status: "queued",
      strategy: body.strategy,
      progress: JSON.stringify({ stage: "queued", done: 0, total: 0 }),
      warnings: "[]",
      automation_ids: "[]",
      result: null,
      error: null,
      started_at: null,
      finished_at: null,
      created_at: t,
      updated_at: t,
    };
    await store.insertGeneration(trx, g);
    return toGeneration(g);
  });
  if (started) ctx.core.events.emit("generationQueued");
  return answer;
};

const isFinalGenerationStatus = (s: string) => (TERMINAL_GENERATION_STATUSES as readonly string[]).includes(s);

export const getGeneration: Handler<O["getGeneration"]> = async (ctx, { params, query }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  const g = await store.latestGeneration(ctx.core.db, feature.id);
  if (!g) throw notFound("generation (none was started for this feature)");
  if (query.wait === 0 || isFinalGenerationStatus(g.status)) return toGeneration(g);
  await ctx.core.waits.until({
    workspaceId: ctx.principal.workspaceId,
    keys: [g.id],
    seconds: query.wait,
    signal: ctx.signal,
    settled: async () => {
      const now = await store.generationStatus(ctx.core.db, g.id);
      return now === undefined || isFinalGenerationStatus(now);
    },
  });
  const latest = await store.latestGeneration(ctx.core.db, feature.id);
  if (!latest) throw notFound("generation (none was started for this feature)");
  return toGeneration(latest);
};

export const cancelGeneration: Handler<O["cancelGeneration"]> = async (ctx, { params }) => {
  const { feature } = await resolveFeature(ctx, params.project, params.feature);
  const g = await store.latestGeneration(ctx.core.db, feature.id);
  if (!g) throw notFound("generation (none was started for this feature)");
  if (g.status !== "queued" && g.status !== "running") throw conflict(`the generation is already ${g.status}`);
  const t = nowIso();
  const cancelled = await store.cancelActiveGeneration(ctx.core.db, g.id, { finished_at: t, updated_at: t, result: "cancelled by request" });
  if (!cancelled) throw conflict("the generation finished before it could be cancelled");
  ctx.core.events.emit("generationCancelled", g.id);
  const next = await store.readGeneration(ctx.core.db, g.id);
  return toGeneration(next);
};
