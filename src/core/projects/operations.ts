// Projects: addressed by id or slug, always within the caller's workspace.
import type { Selectable } from "kysely";
import { rmSync } from "node:fs";
import type { ProjectTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { AppError, conflict, forbidden } from "../../manifest/errors";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { OpenApiColumn } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { slugify } from "../access/users";
import { checkOpenApiDocument } from "./openapi-document";
import { artifactDir } from "../runs/artifacts";
import { resolveProject } from "../scope";

type O = typeof ops;
type ProjectRow = Selectable<ProjectTable>;

function toProject(row: ProjectRow, withDocument: boolean) {
  const { workspace_id: _w, openapi, ...rest } = row;
  return {
    ...rest,
    has_openapi: openapi !== null,
    ...(withDocument ? { openapi: openapi === null ? null : readJsonColumn(OpenApiColumn, openapi, `OpenAPI document of project ${rest.id}`) } : {}),
  };
}

async function slugTaken(ctx: OpContext, slug: string, exceptId?: string): Promise<boolean> {
  let q = ctx.core.db.selectFrom("projects").select("id").where("workspace_id", "=", ctx.principal.workspaceId).where("slug", "=", slug);
  if (exceptId) q = q.where("id", "!=", exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

export const listProjects: Handler<O["listProjects"]> = async ({ core, principal }, { query }) => {
  const q = core.db.selectFrom("projects").selectAll().where("workspace_id", "=", principal.workspaceId);
  return fetchPage(q, "projects", query, (r) => toProject(r, false));
};

export const createProject: Handler<O["createProject"]> = async (ctx, { body }) => {
  let slug = body.slug ?? slugify(body.name);
  if (await slugTaken(ctx, slug)) {
    if (body.slug) throw conflict(`a project with slug "${slug}" already exists`);
    slug = `${slug.slice(0, 57)}-${Math.random().toString(36).slice(2, 8)}`;
  }
  const openapi = body.openapi ? JSON.stringify(await checkOpenApiDocument(body.openapi)) : null;
  const t = nowIso();
  const row: ProjectRow = {
    id: newId("prj"),
    workspace_id: ctx.principal.workspaceId,
    slug,
    name: body.name,
    description: body.description ?? "",
    openapi,
    created_at: t,
    updated_at: t,
  };
  await ctx.core.db.insertInto("projects").values(row).execute();
  return toProject(row, true);
};

export const getProject: Handler<O["getProject"]> = async (ctx, { params }) => toProject(await resolveProject(ctx, params.project), true);

export const updateProject: Handler<O["updateProject"]> = async (ctx, { params, body }) => {
  const row = await resolveProject(ctx, params.project);
  if (body.slug && body.slug !== row.slug && (await slugTaken(ctx, body.slug, row.id))) {
    throw conflict(`a project with slug "${body.slug}" already exists`);
  }
  let openapi = row.openapi;
  if (body.openapi === null) openapi = null;
  else if (body.openapi !== undefined) openapi = JSON.stringify(await checkOpenApiDocument(body.openapi));
  const next: ProjectRow = {
    ...row,
    name: body.name ?? row.name,
    slug: body.slug ?? row.slug,
    description: body.description ?? row.description,
    openapi,
    updated_at: nowIso(),
  };
  await ctx.core.db.updateTable("projects").set(next).where("id", "=", row.id).execute();
  return toProject(next, true);
};

export const deleteProject: Handler<O["deleteProject"]> = async (ctx, { params }) => {
  const row = await resolveProject(ctx, params.project);
  if (!canAdminister(ctx.principal)) throw forbidden("only owners and admins can delete projects");
  const runIds = await ctx.core.db.transaction().execute(async (trx) => {
    const runs = await trx.selectFrom("runs").select(["id", "status"]).where("project_id", "=", row.id).execute();
    for (const r of runs) if (r.status === "queued" || r.status === "running") ctx.core.events.emit("runCancelled", r.id);
    await trx.deleteFrom("runs").where("project_id", "=", row.id).execute();
    await trx.deleteFrom("group_runs").where("project_id", "=", row.id).execute();
    const res = await trx.deleteFrom("projects").where("id", "=", row.id).executeTakeFirst();
    if (Number(res.numDeletedRows) !== 1) throw new AppError("conflict", "the project changed while it was being deleted");
    return runs.map((r) => r.id);
  });
  // The runs' files go once the rows are gone; a leftover file is harmless, a dangling row is not.
  for (const id of runIds) rmSync(artifactDir(ctx.core.config.data_dir, id), { recursive: true, force: true });
};
