// Importers: requests teams already have become automations (source `imported`), each warning kept per request.
import { newId } from "../../security/ids";
import { ops } from "../../manifest";
import { invalid, zodDetails } from "../../manifest/errors";
import type { Handler } from "../handler";
import { nowIso } from "../shared/time";
import { resolveProject } from "../scope";
import { toAutomation } from "../automations/operations";
import * as automations from "../automations/store";
import { parseCurl } from "./curl";
import { readHar } from "./har";
import { readOpenApi } from "./openapi";
import { readPostman } from "./postman";
import { type ImportPlan, saveImport } from "./save";

type O = typeof ops;

export const importCurl: Handler<O["importCurl"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  let parsed: ReturnType<typeof parseCurl>;
  try {
    parsed = parseCurl(body.command);
  } catch (e) {
    throw invalid(`the cURL command cannot be read: ${(e as Error).message}`, [{ path: "command", message: (e as Error).message }]);
  }
  const { request } = parsed;
  const base = body.name ?? `${request.method} ${new URL(request.url).pathname}`;
  // A name clash gets a suffix: (2), (3) …
  let name = base;
  for (let n = 2; (await automations.automationsNamed(ctx.core.db, project.id, name, 1)).length > 0; n++) name = `${base} (${n})`;
  const candidate = { name, kind: "http" as const, steps: [{ name: base, request, expect: [{ status: { lt: 400 } }] }] };
  const checked = ops.createAutomation.body?.safeParse(candidate);
  if (!checked) throw new Error("create_automation has no body schema");
  if (!checked.success) throw invalid("the imported request is not a valid automation", zodDetails(checked.error));
  const t = nowIso();
  const row = {
    id: newId("aut"),
    project_id: project.id,
    feature_id: null,
    generation_id: null,
    name,
    description: "Imported from a cURL command",
    kind: "http" as const,
    steps: JSON.stringify(checked.data.steps),
    environment_id: null,
    tags: "[]",
    status: "active" as const,
    source: "imported" as const,
    edited: 0,
    timeout_ms: ctx.core.config.runner.default_timeout_ms,
    retries: 0,
    last_run_id: null,
    last_run_status: null,
    last_run_at: null,
    key: null,
    quarantined: 0,
    created_at: t,
    updated_at: t,
  };
  await automations.insertAutomation(ctx.core.db, row);
  return { automations: [toAutomation(row)], warnings: parsed.warnings.map((message) => ({ request: name, message })) };
};

export const importPostman: Handler<O["importPostman"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  let plan: ImportPlan;
  try {
    plan = readPostman(body.collection, body.name);
  } catch (e) {
    throw invalid(`the collection cannot be read: ${(e as Error).message}`, [{ path: "collection", message: (e as Error).message }]);
  }
  return saveImport(ctx, project.id, plan);
};

export const importHar: Handler<O["importHar"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  let plan: ImportPlan;
  try {
    plan = readHar(body.har, body.name);
  } catch (e) {
    throw invalid(`the HAR file cannot be read: ${(e as Error).message}`, [{ path: "har", message: (e as Error).message }]);
  }
  return saveImport(ctx, project.id, plan);
};

export const importOpenapi: Handler<O["importOpenapi"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  return saveImport(ctx, project.id, await readOpenApi(body.document, ctx.core.config.generation, body.name, body.base_url));
};
