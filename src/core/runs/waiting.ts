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
import { connectedSince, runnerBrowser, runnerLabels } from "../runners/operations";
import { readRunSpec, StringList } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import * as runsStore from "./store";

/** A queued run as far as who may take it goes. */
export interface WaitingRun {
  id: string;
  environmentId: string | null;
  /** Its snapshot as stored, when at hand (else read if needed): its kind decides whether a runner needs Chromium. */
  specText?: string;
}

interface LiveRunner {
  labels: string[];
  browser: boolean;
}

/**
 * What each of these queued runs (of the caller's workspace) waits for, by run id; runs something connected can
 * take are absent. Only runs no engine of a server takes (their environment requires labels, or this server runs
 * nothing itself) look at the runners, and only their snapshots are read (for their kind) when not given. An
 * answer that looked at runners changes with the clock alone: it is marked uncacheable.
 */
export async function waitingReasons(ctx: OpContext, runs: WaitingRun[]): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  if (runs.length === 0) return reasons;
  const core = ctx.core;
  const required = await requiredLabels(core.db, [...new Set(runs.flatMap((r) => (r.environmentId === null ? [] : [r.environmentId])))]);
  // On SQLite this server is the only one executing; on PostgreSQL other nodes may execute what this one does not.
  const localEngine = core.config.runner.local || core.probe.backend === "postgres";
  const labelsOf = (run: WaitingRun) => (run.environmentId !== null ? required.get(run.environmentId) : undefined) ?? [];
  const forRunners = runs.filter((run) => labelsOf(run).length > 0 || !localEngine);
  if (forRunners.length === 0) return reasons;
  ctx.uncacheable = true;
  const live = await liveRunners(core, ctx.principal.workspaceId);
  const unread = forRunners.filter((run) => run.specText === undefined).map((run) => run.id);
  const specs = new Map((await runsStore.specsOfRuns(core.db, unread)).map((r) => [r.id, r.spec]));
  for (const run of forRunners) {
    const browser = readRunSpec(run.specText ?? specs.get(run.id) ?? "")?.kind === "browser";
    const reason = reasonFor(live, labelsOf(run), browser);
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

/** The runners of this workspace and the server-wide ones connected now. */
async function liveRunners(core: Core, workspaceId: string): Promise<LiveRunner[]> {
  const rows = await runners.runnersHeardSince(core.db, workspaceId, connectedSince(core));
  return rows.map((r) => ({ labels: runnerLabels(r), browser: runnerBrowser(r) === true }));
}
