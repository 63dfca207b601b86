// Environments: variables are readable, secrets are write-only (only their names are ever returned) and sealed
// at rest; a protected environment is changed only by owners and admins.
import type { Selectable } from "kysely";
import type { EnvironmentTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import { conflict, forbidden, invalid, notFound } from "../../manifest/errors";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import { StringList, StringMap } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { resolveProject } from "../scope";
import { sealSecrets, sealValues } from "./secrets";
import * as store from "./store";

type O = typeof ops;
type EnvRow = Selectable<EnvironmentTable>;

/** The stored values by name (sealed, or plain text in a row not sealed yet). */
const secretsOf = (row: EnvRow) => readJsonColumn(StringMap, row.secrets, `secrets of environment ${row.id}`);

export function toEnvironment(row: EnvRow) {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    variables: readJsonColumn(StringMap, row.variables, `variables of environment ${row.id}`),
    secret_names: Object.keys(secretsOf(row)).sort(),
    protected: row.protected === 1,
    allowed_hosts: row.allowed_hosts === null ? null : readJsonColumn(StringList, row.allowed_hosts, `allowed_hosts of environment ${row.id}`),
    runner_labels: readJsonColumn(StringList, row.runner_labels, `runner_labels of environment ${row.id}`),
    key: row.key ?? null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** An environment of the project by id or name. */
export async function findEnvironment(ctx: OpContext, projectId: string, ref: string): Promise<EnvRow | undefined> {
  return store.findEnvironmentByRef(ctx.core.db, projectId, ref);
}

async function resolveEnvironment(ctx: OpContext, projectRef: string, ref: string) {
  const project = await resolveProject(ctx, projectRef);
  const env = await findEnvironment(ctx, project.id, ref);
  if (!env) throw notFound("environment");
  return { project, env };
}

const nameTaken = (ctx: OpContext, projectId: string, name: string, exceptId?: string) => store.environmentNameTaken(ctx.core.db, projectId, name, exceptId);

/** allowed_hosts as stored: lowercase, each once (null: the host of BASE_URL). Apply stores and compares them so too. */
export const allowedHostsText = (hosts: string[] | null) => (hosts === null ? null : JSON.stringify([...new Set(hosts.map((h) => h.toLowerCase()))]));

/** runner_labels as stored: each once, sorted (their order means nothing). */
export const runnerLabelsText = (labels: string[]) => JSON.stringify([...new Set(labels)].sort());

/**
 * Protection is decided by owners and admins: setting it, and any change to an environment that has it. `body`
 * names the protection fields a change gives (apply: those it changes).
 */
export function assertMayChangeEnvironment(ctx: OpContext, env: EnvRow | null, body: { protected?: boolean; allowed_hosts?: string[] | null }) {
  if (canAdminister(ctx.principal)) return;
  if (env?.protected === 1) throw forbidden(`the environment "${env.name}" is protected: only owners and admins can change or delete it`);
  if (body.protected !== undefined || body.allowed_hosts !== undefined)
    throw forbidden("only owners and admins can protect an environment or set its allowed_hosts");
}

export const listEnvironments: Handler<O["listEnvironments"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  return fetchPage(store.environmentsQuery(ctx.core.db, project.id), "environments", query, toEnvironment);
};

export const createEnvironment: Handler<O["createEnvironment"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  assertMayChangeEnvironment(ctx, null, body);
  if (await nameTaken(ctx, project.id, body.name)) throw conflict(`an environment named "${body.name}" already exists`);
  const t = nowIso();
  const id = newId("env");
  const row: EnvRow = {
    id,
    project_id: project.id,
    name: body.name,
    variables: JSON.stringify(body.variables ?? {}),
    secrets: sealSecrets(ctx.core.secrets, id, body.secrets ?? {}),
    secrets_sealed: 1,
    protected: body.protected ? 1 : 0,
    allowed_hosts: allowedHostsText(body.allowed_hosts ?? null),
    runner_labels: runnerLabelsText(body.runner_labels ?? []),
    key: null,
    created_at: t,
    updated_at: t,
  };
  await store.insertEnvironment(ctx.core.db, row);
  return toEnvironment(row);
};

export const getEnvironment: Handler<O["getEnvironment"]> = async (ctx, { params }) =>
  toEnvironment((await resolveEnvironment(ctx, params.project, params.environmentId)).env);

/** `variables` replaces them all; `variables_merge` sets (or, with null, removes) only the names it gives. */
function nextVariables(env: EnvRow, body: { variables?: Record<string, string>; variables_merge?: Record<string, string | null> }): Record<string, string> {
  if (body.variables && body.variables_merge) {
    throw invalid("give variables (replace all) or variables_merge (change some), not both", [{ path: "body.variables_merge", message: "not with variables" }]);
  }
  if (body.variables) return body.variables;
  const current = readJsonColumn(StringMap, env.variables, `variables of environment ${env.id}`);
  for (const [k, v] of Object.entries(body.variables_merge ?? {})) {
    if (v === null) delete current[k];
    else current[k] = v;
  }
  return current;
}

/** Names of an environment's secrets (what a per-run variable may not shadow). */
export function secretNamesOf(row: EnvRow): string[] {
  return Object.keys(secretsOf(row));
}

export const updateEnvironment: Handler<O["updateEnvironment"]> = async (ctx, { params, body }) => {
  const { project, env } = await resolveEnvironment(ctx, params.project, params.environmentId);
  assertMayChangeEnvironment(ctx, env, body);
  const expected = expectVersion(ctx, env, "environment");
  if (body.name && body.name !== env.name && (await nameTaken(ctx, project.id, body.name, env.id))) {
    throw conflict(`an environment named "${body.name}" already exists`);
  }
  // Values kept as they are stored (sealed); a row an older svc left in plain text is sealed now.
  const secrets = env.secrets_sealed === 1 ? secretsOf(env) : sealValues(ctx.core.secrets, env.id, secretsOf(env));
  for (const [k, v] of Object.entries(body.secrets ?? {})) {
    if (v === null) delete secrets[k];
    else Object.assign(secrets, sealValues(ctx.core.secrets, env.id, { [k]: v }));
  }
  const next: EnvRow = {
    ...env,
    name: body.name ?? env.name,
    variables: JSON.stringify(nextVariables(env, body)),
    secrets: JSON.stringify(secrets),
    secrets_sealed: 1,
    protected: body.protected === undefined ? env.protected : body.protected ? 1 : 0,
    allowed_hosts: body.allowed_hosts === undefined ? env.allowed_hosts : allowedHostsText(body.allowed_hosts),
    runner_labels: body.runner_labels === undefined ? env.runner_labels : runnerLabelsText(body.runner_labels),
    updated_at: nextStamp(env.updated_at),
  };
  if (!(await store.updateEnvironment(ctx.core.db, env.id, next, expected))) throw staleVersion("environment", env);
  return toEnvironment(next);
};

export const deleteEnvironment: Handler<O["deleteEnvironment"]> = async (ctx, { params }) => {
  const { env } = await resolveEnvironment(ctx, params.project, params.environmentId);
  assertMayChangeEnvironment(ctx, env, {});
  const expected = expectVersion(ctx, env, "environment");
  if (!(await store.deleteEnvironment(ctx.core.db, env.id, expected)) && expected !== undefined) throw staleVersion("environment", env);
};
