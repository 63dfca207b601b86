// The database side of test generation: claiming a queued job, progress, writing its drafts in one transaction
// (replacing the unedited drafts of earlier generations), failing it, and recovering jobs a dead process left.
import type { Selectable, Transaction } from "kysely";
import type { AutomationTable, DB, FeatureTable, GenerationTable } from "../../db/schema";
import type { Step } from "../../manifest/automation-format";
import { newId } from "../../security/ids";
import type { Core } from "../context";
import { StringList } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { nowIso } from "../shared/time";
import * as automationStore from "../automations/store";
import * as featureStore from "../features/store";
import * as groupStore from "../groups/store";
import * as projectStore from "../projects/store";
import * as runStore from "../runs/store";
import * as store from "./store";

export interface GenerationProgress {
  stage: string;
  done: number;
  total: number;
}

export interface GenerationWarningRecord {
  message: string;
  generator?: string;
  scenario?: string;
  line?: number;
  text?: string;
  suggestion?: string;
}

export interface ClaimedGeneration {
  id: string;
  projectId: string;
  strategy: Selectable<GenerationTable>["strategy"];
  feature: Selectable<FeatureTable>;
  /** The project's OpenAPI document of the system under test as stored (JSON), when it has one; read by the job. */
  openapiText: string | null;
}

export interface GeneratedDraft {
  name: string;
  description: string;
  kind: "http" | "browser";
  steps: Step[];
  tags: string[];
}

export const INTERRUPTED_GENERATION_MESSAGE = "interrupted by server restart: start the generation again";

/** Marks the oldest queued generation `running` in one statement, so no two workers take the same job. */
export async function claimNextGeneration(core: Core): Promise<ClaimedGeneration | null> {
  const t = nowIso();
  const progress = JSON.stringify({ stage: "starting", done: 0, total: 0 });
  const row = await core.queue.claimNextGeneration(t, progress);
  if (!row) return null;
  const feature = await featureStore.findFeature(core.db, row.project_id, row.feature_id);
  if (!feature) {
    await failGeneration(core, row.id, "the feature was deleted", []);
    return null;
  }
  const openapiText = await projectStore.projectOpenapi(core.db, row.project_id);
  return {
    id: row.id,
    projectId: row.project_id,
    strategy: row.strategy,
    feature,
    openapiText,
  };
}

/** Saves progress while the job is still running (a cancelled record is never written over). */
export async function recordGenerationProgress(core: Core, id: string, progress: GenerationProgress): Promise<void> {
  await store.updateRunningGeneration(core.db, id, { progress: JSON.stringify(progress), updated_at: nowIso() });
}

export async function failGeneration(core: Core, id: string, error: string, warnings: GenerationWarningRecord[]): Promise<void> {
  const t = nowIso();
  await store.updateRunningGeneration(core.db, id, { status: "failed", error, warnings: JSON.stringify(warnings), finished_at: t, updated_at: t });
  core.events.emit("generationFinished", id);
}

type AutomationRow = Selectable<AutomationTable>;

/** Drafts of earlier generations that nobody edited or activated: generating again replaces them. */
async function removeReplaceableDrafts(trx: Transaction<DB>, featureId: string, generationId: string) {
  const earlier = await automationStore.earlierGeneratedAutomations(trx, featureId, generationId);
  const replace = earlier.filter((a) => a.status === "draft" && a.edited === 0).map((a) => a.id);
  const kept = earlier.length - replace.length;
  if (replace.length === 0) return { replaced: 0, kept, cancelled: [] };
  const t = nowIso();
  const active = await runStore.activeRuns(trx, { automationIds: replace });
  for (const r of active) {
    await runStore.cancelActiveRun(trx, r.id, { error: "the automation was replaced by a new generation", finished_at: t, updated_at: t });
  }
  const projectId = earlier[0]?.project_id ?? "";
  const groups = await groupStore.groupMemberLists(trx, projectId);
  for (const g of groups) {
    const ids = readJsonColumn(StringList, g.automation_ids, `automation_ids of group ${g.id}`);
    const left = ids.filter((id) => !replace.includes(id));
    if (left.length !== ids.length) {
      await groupStore.updateGroup(trx, g.id, { automation_ids: JSON.stringify(left), updated_at: t });
    }
  }
  await automationStore.deleteAutomations(trx, replace);
  // Their runs are told cancelled by the caller, once committed.
  return { replaced: replace.length, kept, cancelled: active.map((r) => r.id) };
}

/** `name`, or `name (2)`, `name (3)`, … the first not taken (names are unique within a project). */
export function uniqueName(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  let n = 2;
  while (taken.has(`${name} (${n})`)) n++;
  return `${name} (${n})`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Writes the job's drafts and finishes it `succeeded`, all in one transaction. Returns false (and writes
 * nothing) when the job is no longer running: it was cancelled, or its feature deleted, meanwhile.
 */
export async function completeGeneration(
  core: Core,
  job: ClaimedGeneration,
  drafts: GeneratedDraft[],
  warnings: GenerationWarningRecord[],
  summary: string,
): Promise<boolean> {
  let cancelled: string[] = [];
  const done = await core.db.transaction().execute(async (trx) => {
    if ((await store.generationStatus(trx, job.id)) !== "running") return false;
    const replacing = await removeReplaceableDrafts(trx, job.feature.id, job.id);
    const { replaced, kept } = replacing;
    cancelled = replacing.cancelled;
    const t = nowIso();
    const ids: string[] = [];
    // Its own unedited drafts are gone (replaced); any other automation keeps its name and the draft is suffixed.
    const taken = await automationStore.automationNames(trx, job.projectId);
    for (const d of drafts) {
      const name = uniqueName(d.name, taken);
      taken.add(name);
      const row: AutomationRow = {
        id: newId("aut"),
        project_id: job.projectId,
        feature_id: job.feature.id,
        generation_id: job.id,
        name,
        description: d.description,
        kind: d.kind,
        steps: JSON.stringify(d.steps),
        environment_id: null,
        quarantined: 0,
        tags: JSON.stringify(d.tags),
        status: "draft",
        source: "generated",
        key: null,
        edited: 0,
        timeout_ms: core.config.runner.default_timeout_ms,
        retries: 0,
        last_run_id: null,
        last_run_status: null,
        last_run_at: null,
        created_at: t,
        updated_at: t,
      };
      await automationStore.insertAutomation(trx, row);
      ids.push(row.id);
    }
    const result = `${summary} Created ${plural(drafts.length, "draft automation")}; replaced ${plural(replaced, "unedited draft")} of earlier generations; kept ${plural(kept, "edited or activated automation")} of earlier generations.`;
    await store.updateRunningGeneration(trx, job.id, {
      status: "succeeded",
      automation_ids: JSON.stringify(ids),
      warnings: JSON.stringify(warnings),
      result,
      progress: JSON.stringify({ stage: "done", done: drafts.length, total: drafts.length }),
      finished_at: t,
      updated_at: t,
    });
    return true;
  });
  if (done) {
    for (const id of cancelled) core.events.emit("runCancelled", id);
    core.events.emit("generationFinished", job.id);
  }
  return done;
}

/** At start no generation can really be running: those a dead process left `running` end `failed`. */
export async function recoverInterruptedGenerations(core: Core): Promise<number> {
  const t = nowIso();
  return store.failRunningGenerations(core.db, { error: INTERRUPTED_GENERATION_MESSAGE, finished_at: t, updated_at: t });
}

/** True while the job may still write: used to stop a job whose record was cancelled in another process. */
export async function generationStillRunning(core: Core, id: string): Promise<boolean> {
  return (await store.generationStatus(core.db, id)) === "running";
}
