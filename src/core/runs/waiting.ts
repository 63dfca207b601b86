// Why a queued run has not started, when nothing connected can take it: its environment requires runner labels
// no connected runner has, it is a browser run and the runners that could take it have no Chromium, or this
// server executes no runs itself (runner.local = false) and no runner is connected. Said on get_run and
// get_group_run (and so by `--watch`, the MCP tools and the web app), so that a run waiting for a runner that
// never comes does not look like a slow queue.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";
import type { Core, OpContext } from "../context";
import * as environments from "../environments/store";
import * as runners from "../runners/store";
import { runnerBrowser, runnerLabels } from "../runners/operations";
import { readRunSpec, StringList } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";

/** A queued run as far as who may take it goes. */
export interface WaitingRun {
  id: string;
  environmentId: string | null;
  /** Its snapshot as stored: its kind decides whether a runner needs Chromium. */
  specText: string;
}

interface LiveRunner {
  labels: string[];
  browser: boolean;
}

/**
 * What each of these queued runs (of the caller's workspace) waits for, by run id; runs something connected can
 * take are absent. A runner is connected while it was heard from within a lease (runner.lease_ms): it heart-beats
 * every third of one. An answer that looked at runners changes with the clock alone: it is marked uncacheable.
 */
export async function waitingReasons(ctx: OpContext, runs: WaitingRun[]): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  if (runs.length === 0) return reasons;
  const core = ctx.core;
  const required = await requiredLabels(core.db, [...new Set(runs.flatMap((r) => (r.environmentId === null ? [] : [r.environmentId])))]);
  // On SQLite this server is the only one executing; on PostgreSQL other nodes may execute what this one does not.
  const localEngine = core.config.runner.local || core.probe.backend === "postgres";
  let live: LiveRunner[] | null = null;
  for (const run of runs) {
    const labels = (run.environmentId !== null ? required.get(run.environmentId) : undefined) ?? [];
    if (labels.length === 0 && localEngine) continue;
    live ??= await liveRunners(core, ctx.principal.workspaceId);
    ctx.uncacheable = true;
    const browser = readRunSpec(run.specText)?.kind === "browser";
    const reason = reasonFor(live, labels, browser);
    if (reason !== null) reasons.set(run.id, reason);
  }
  return reasons;
}

/** Null when one of `runners` takes a run needing `labels` (and Chromium for a browser run). */
export function reasonFor(runners: LiveRunner[], labels: string[], browser: boolean): string | null {
  const labelled = runners.filter((r) => labels.every((l) => r.labels.includes(l)));
  if (labelled.some((r) => r.browser || !browser)) return null;
  const wanted = labels.length > 0 ? `a runner with the labels ${labels.join(", ")}` : "a runner";
  const where = labels.length > 0 ? "" : " (this server executes no runs itself: runner.local is false)";
  if (labelled.length > 0) return `waiting for ${wanted} that can run browser runs${where}: the connected ones have no Chromium`;
  return `waiting for ${wanted}${browser ? " that can run browser runs" : ""}${where}: none is connected`;
}

async function requiredLabels(db: Kysely<DB>, environmentIds: string[]): Promise<Map<string, string[]>> {
  const rows = await environments.runnerLabelsOf(db, environmentIds);
  return new Map(rows.map((e) => [e.id, readJsonColumnOr(StringList, e.runner_labels, [])]));
}

/** The runners of this workspace and the server-wide ones heard from within a lease, revoked ones left out. */
async function liveRunners(core: Core, workspaceId: string): Promise<LiveRunner[]> {
  const since = new Date(Date.now() - core.config.runner.lease_ms).toISOString();
  const rows = await runners.runnersHeardSince(core.db, workspaceId, since);
  return rows.map((r) => ({ labels: runnerLabels(r), browser: runnerBrowser(r) === true }));
}
