// Idempotency records: the first answer to a start (a run, a group run, a generation), kept for 24 h under the
// workspace, the operation with the resource it acts on, and the client's Idempotency-Key.
import type { OpContext } from "./context";
import { type NamedKind, pathParamId, resolveProject } from "./scope";
import { nowIso } from "./shared/time";

/** Path parameters that may name their resource instead of giving its id. */
const NAMED_PARAMS: Record<string, NamedKind | undefined> = { feature: "feature", automationId: "automation", groupId: "group" };

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

export interface IdempotentAnswer {
  status: number;
  /** The response body as first sent. */
  body: string;
}

/**
 * The operation and the resource it acts on, as the same text however the request spelled it: a project is
 * named by id or by slug, so it is resolved to its id (an unknown project is the operation's own 404); a feature,
 * automation or group may be named, so it is resolved to its id too. Path spelling (a trailing slash,
 * percent-encoding) plays no part.
 */
export async function idempotencyScope(ctx: OpContext, operation: string, params: Record<string, unknown>): Promise<string> {
  const parts = [operation];
  const project = typeof params.project === "string" ? await resolveProject(ctx, params.project) : null;
  for (const name of Object.keys(params).sort()) {
    const value = String(params[name]);
    const kind = NAMED_PARAMS[name];
    const id = name === "project" && project ? project.id : kind && project ? await pathParamId(ctx, kind, project.id, value) : value;
    parts.push(`${name}=${id}`);
  }
  return parts.join(" ");
}

/** The answer kept for this key, unless it is older than the TTL. */
export async function findIdempotentAnswer(ctx: OpContext, scope: string, key: string): Promise<IdempotentAnswer | null> {
  const since = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
  const stored = await ctx.core.db.selectFrom("idempotency_keys").select(["status", "response", "created_at"])
    .where("workspace_id", "=", ctx.principal.workspaceId).where("operation", "=", scope).where("key", "=", key).executeTakeFirst();
  return stored && stored.created_at >= since ? { status: stored.status, body: stored.response } : null;
}

/** Keeps the answer for this key; now and then drops the expired ones. */
export async function keepIdempotentAnswer(ctx: OpContext, scope: string, key: string, answer: IdempotentAnswer): Promise<void> {
  const db = ctx.core.db;
  const row = { status: answer.status, response: answer.body, created_at: nowIso() };
  await db.insertInto("idempotency_keys")
    .values({ workspace_id: ctx.principal.workspaceId, operation: scope, key, ...row })
    .onConflict((oc) => oc.columns(["workspace_id", "operation", "key"]).doUpdateSet(row))
    .execute();
  if (Math.random() < 0.01) {
    await db.deleteFrom("idempotency_keys").where("created_at", "<", new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString()).execute();
  }
}
