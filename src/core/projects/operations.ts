// Projects: addressed by id or slug, always within the caller's workspace.
import type { Selectable } from "kysely";
import { rmSync } from "node:fs";
import type { ProjectTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { AppError, conflict, forbidden } from "../../manifest/errors";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import { OpenApiColumn } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { slugify } from "../access/users";
import { checkOpenApiDocument } from "./openapi-document";
import { artifactDir } from "../runs/artifacts";
import { resolveProject } from "../scope";
import * as store from "./store";

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

const slugTaken = (ctx: OpContext, slug: string, exceptId?: string) => store.projectSlugTaken(ctx.core.db, ctx.principal.workspaceId, slug, exceptId);

export const listProjects: Handler<O["listProjects"]> = async ({ core, principal }, { query }) => {
  return fetchPage(store.projectsQuery(core.db, principal.workspaceId), "projects", query, (r) => toProject(r, false));
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
  await store.insertProject(ctx.core.db, row);
  return toProject(row, true);
};

export const getProject: Handler<O["getProject"]> = async (ctx, { params }) => toProject(await resolveProject(ctx, params.project), true);

export const updateProject: Handler<O["updateProject"]> = async (ctx, { params, body }) => {
  const row = await resolveProject(ctx, params.project);
  const expected = expectVersion(ctx, row, "project");
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
    updated_at: nextStamp(row.updated_at),
  };
  if (!(await store.updateProject(ctx.core.db, row.id, next, expected))) throw staleVersion("project", row);
  return toProject(next, true);
};

export const deleteProject: Handler<O["deleteProject"]> = async (ctx, { params }) => {
  const row = await resolveProject(ctx, params.project);
  if (!canAdminister(ctx.principal)) throw forbidden("only owners and admins can delete projects");
  const expected = expectVersion(ctx, row, "project");
  const runs = await ctx.core.db.transaction().execute(async (trx) => {
    const runs = await store.projectRuns(trx, row.id);
    if (!(await store.deleteProjectWithRuns(trx, row.id, expected))) {
      if (expected !== undefined) throw staleVersion("project", row);
      throw new AppError("conflict", "the project changed while it was being deleted");
    }
    return runs;
  });
  // Told once committed: the engines and runners stop its runs, which are gone.
  for (const r of runs) if (r.status === "queued" || r.status === "running") ctx.core.events.emit("runCancelled", r.id);
  // The runs' files go once the rows are gone; a leftover file is harmless, a dangling row is not.
  for (const { id } of runs) rmSync(artifactDir(ctx.core.config.data_dir, id), { recursive: true, force: true });
};
