// Runners on other machines: their tokens (made here, by `svc admin create-runner-token` or create_runner) and
// what a workspace's owners and admins see of them.
import type { Selectable } from "kysely";
import type { RunnerTable } from "../../db/schema";
import type { ops } from "../../manifest";
import { log } from "../../logging";
import { AppError, forbidden, notFound } from "../../manifest/errors";
import { newId } from "../../security/ids";
import { generateRunnerToken } from "../../security/runner-tokens";
import { canAdminister, type Core, type OpContext } from "../context";
import { LISTED_TWINS, twinsConflict } from "../scope";
import type { Handler } from "../handler";
import { StringList } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import * as store from "./store";

type O = typeof ops;
export type RunnerRow = Selectable<RunnerTable>;

/** The labels a runner has: those of its token and those it advertised in its last hello. */
export function runnerLabels(row: Pick<RunnerRow, "labels" | "advertised_labels">): string[] {
  const given = readJsonColumnOr(StringList, row.labels, []);
  const advertised = readJsonColumnOr(StringList, row.advertised_labels, []);
  return [...new Set([...given, ...advertised])].sort();
}

export function runnerBrowser(row: Pick<RunnerRow, "capabilities">): boolean | null {
  if (row.capabilities === null) return null;
  try {
    return (JSON.parse(row.capabilities) as { browser?: unknown }).browser === true;
  } catch {
    return false;
  }
}

/**
 * Heard from within a lease (runner.lease_ms), and not revoked: a runner heart-beats every third of one, so a
 * connected runner can take runs now. Queries select them as heard from since `connectedSince`.
 */
export function runnerConnected(row: Pick<RunnerRow, "last_seen_at" | "revoked_at">, leaseMs: number, now = Date.now()): boolean {
  return row.revoked_at === null && row.last_seen_at !== null && Date.parse(row.last_seen_at) >= now - leaseMs;
}

/** Since when a runner must have been heard from to be connected now (ISO time), for the queries that select them. */
export function connectedSince(core: Core): string {
  return new Date(Date.now() - core.config.runner.lease_ms).toISOString();
}

/** Runners of every workspace connected now, for /metrics. */
export async function connectedRunnerCount(core: Core): Promise<number> {
  return store.countRunnersHeardSince(core.db, connectedSince(core));
}

function toRunner(row: RunnerRow, running: number, leaseMs: number) {
  return {
    id: row.id,
    name: row.name,
    labels: runnerLabels(row),
    scope: row.workspace_id === null ? ("server" as const) : ("workspace" as const),
    prefix: row.prefix,
    version: row.version,
    browser: runnerBrowser(row),
    running,
    connected: runnerConnected(row, leaseMs),
    last_seen_at: row.last_seen_at,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
  };
}

/** Makes a runner and its token; only the hash is kept, the token is returned this once. */
export async function createRunnerToken(core: Core, input: { name: string; labels: string[]; workspaceId: string | null }) {
  const { token, prefix, hash } = generateRunnerToken();
  const t = nowIso();
  const row: RunnerRow = {
    id: newId("rnr"),
    name: input.name,
    labels: JSON.stringify([...new Set(input.labels)].sort()),
    workspace_id: input.workspaceId,
    prefix,
    token_hash: hash,
    created_at: t,
    updated_at: t,
    last_seen_at: null,
    version: null,
    capabilities: null,
    advertised_labels: "[]",
    instance_id: null,
    revoked_at: null,
  };
  await store.insertRunner(core.db, row);
  log.info("runner token created", { runner_id: row.id, prefix, workspace_id: input.workspaceId });
  return { row, token };
}

export async function revokeRunnerById(core: Core, runnerId: string): Promise<void> {
  await store.revokeRunner(core.db, runnerId, nowIso());
  log.info("runner revoked", { runner_id: runnerId });
}

/** This workspace's runs each runner holds now. */
async function runningCounts(ctx: OpContext, runnerIds: string[]): Promise<Map<string, number>> {
  const rows = await store.runningCountsInWorkspace(ctx.core.db, ctx.principal.workspaceId, runnerIds);
  return new Map(rows.map((r) => [r.runner_id ?? "", Number(r.n)]));
}

function assertAdmin(ctx: OpContext): void {
  if (!canAdminister(ctx.principal)) throw forbidden("only owners and admins can see and manage runners");
}

/**
 * A runner this workspace may see (its own, or a server-wide one), by id or exact name: `svc runners show eu-box`.
 * Names may repeat: a name several share is a 409 listing their ids.
 */
async function visibleRunner(ctx: OpContext, ref: string): Promise<RunnerRow> {
  const byId = await store.findVisibleRunner(ctx.core.db, ctx.principal.workspaceId, ref);
  if (byId) return byId;
  const ids = await store.visibleRunnerIdsNamed(ctx.core.db, ctx.principal.workspaceId, ref, LISTED_TWINS + 1);
  if (ids.length > 1) throw twinsConflict("runner", ref, "among the workspace's runners", ids);
  const row = ids[0] === undefined ? undefined : await store.findVisibleRunner(ctx.core.db, ctx.principal.workspaceId, ids[0]);
  if (!row)
    throw ref.startsWith("rnr_")
      ? notFound("runner")
      : new AppError("not_found", `no runner named "${ref}" among the workspace's runners (give its name exactly, or its id rnr_…)`);
  return row;
}

export const listRunners: Handler<O["listRunners"]> = async (ctx, { query }) => {
  assertAdmin(ctx);
  const page = await fetchPage(store.visibleRunnersQuery(ctx.core.db, ctx.principal.workspaceId), "runners", query, (r) => r);
  const counts = await runningCounts(
    ctx,
    page.data.map((r) => r.id),
  );
  return { data: page.data.map((r) => toRunner(r, counts.get(r.id) ?? 0, ctx.core.config.runner.lease_ms)), next_cursor: page.next_cursor };
};

export const createRunner: Handler<O["createRunner"]> = async (ctx, { body }) => {
  assertAdmin(ctx);
  const { row, token } = await createRunnerToken(ctx.core, { name: body.name, labels: body.labels, workspaceId: ctx.principal.workspaceId });
  return { ...toRunner(row, 0, ctx.core.config.runner.lease_ms), token };
};

export const getRunner: Handler<O["getRunner"]> = async (ctx, { params }) => {
  assertAdmin(ctx);
  const row = await visibleRunner(ctx, params.runnerId);
  const counts = await runningCounts(ctx, [row.id]);
  return toRunner(row, counts.get(row.id) ?? 0, ctx.core.config.runner.lease_ms);
};

export const revokeRunner: Handler<O["revokeRunner"]> = async (ctx, { params }) => {
  assertAdmin(ctx);
  const row = await visibleRunner(ctx, params.runnerId);
  if (row.workspace_id === null) throw forbidden(`a server-wide runner is revoked by the server's operator: svc admin revoke-runner --id ${row.id}`);
  await revokeRunnerById(ctx.core, row.id);
};
