// Idempotency records: the first answer to a start (a run, a group run, a generation), kept for 24 h under the
// workspace, the operation with the resource it acts on, and the client's Idempotency-Key; kept in the start's own
// transaction.
import type { Kysely, Transaction } from "kysely";
import type { DB } from "../db/schema";
import { invalid } from "../manifest/errors";
import type { OpContext } from "./context";
import { type NamedKind, pathParamId, resolveProject } from "./scope";
import * as store from "./shared/idempotency-store";
import { nowIso } from "./shared/time";

/** Path parameters that may name their resource instead of giving its id. */
const NAMED_PARAMS: Record<string, NamedKind | undefined> = { feature: "feature", automationId: "automation", groupId: "group" };

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** A key is 1 to 255 characters, however it arrives (the Idempotency-Key header, an MCP argument, an in-process call). */
export function assertIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > 255)
    throw invalid("Idempotency-Key must be 1 to 255 characters", [{ path: "Idempotency-Key", message: "invalid length" }]);
}

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
  return keptAnswer(ctx.core.db, { workspace_id: ctx.principal.workspaceId, operation: scope, key });
}

async function keptAnswer(db: Kysely<DB>, where: store.IdempotencyRecordKey): Promise<IdempotentAnswer | null> {
  const since = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
  const stored = await store.findIdempotencyRecord(db, where);
  return stored && stored.created_at >= since ? { status: stored.status, body: stored.response } : null;
}

/**
 * Runs a start (a run, a group run, a generation) in one transaction: `work` does the work and builds the answer.
 * Under an Idempotency-Key the answer is kept in that same transaction, so the work and its record commit
 * together or not at all: a failure between them cannot leave work started that a retry would start again.
 *
 * The transaction claims the key before the work: its first statement writes the key's row (an insert that
 * yields to an existing row), so concurrent requests with one key — at once, or on another node sharing the
 * store — wait for each other there, and every one but the first finds the first one's answer. That answer is
 * then `ctx.idempotency.replayed`, and `started` is false.
 */
export async function startOnce<T>(ctx: OpContext, work: (trx: Transaction<DB>) => Promise<T>): Promise<{ answer: T; started: boolean }> {
  const start = ctx.idempotency;
  if (!start) return { answer: await ctx.core.db.transaction().execute(work), started: true };
  const where = { workspace_id: ctx.principal.workspaceId, operation: start.scope, key: start.key };
  return ctx.core.db.transaction().execute(async (trx) => {
    const claimed = await store.claimIdempotencyKey(trx, { ...where, status: start.status, response: "", created_at: nowIso() });
    if (!claimed) {
      const kept = await keptAnswer(trx, where);
      if (kept) {
        start.replayed = kept;
        // The body this operation answered first, checked against its schema when it was sent.
        return { answer: JSON.parse(kept.body) as T, started: false };
      }
    }
    const answer = await work(trx);
    await store.saveIdempotentAnswer(trx, where, { status: start.status, response: JSON.stringify(answer), created_at: nowIso() });
    if (Math.random() < 0.01) await store.deleteIdempotencyRecordsBefore(trx, new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString());
    return { answer, started: true };
  });
}
