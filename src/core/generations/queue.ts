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
  const feature = await core.db.selectFrom("features").selectAll().where("id", "=", row.feature_id).executeTakeFirst();
  if (!feature) {
    await failGeneration(core, row.id, "the feature was deleted", []);
    return null;
  }
  const project = await core.db.selectFrom("projects").select("openapi").where("id", "=", row.project_id).executeTakeFirst();
  return {
    id: row.id,
    projectId: row.project_id,
    strategy: row.strategy,
    feature,
    openapiText: project?.openapi ?? null,
  };
}

/** Saves progress while the job is still running (a cancelled record is never written over). */
export async function recordGenerationProgress(core: Core, id: string, progress: GenerationProgress): Promise<void> {
  await core.db
    .updateTable("generations")
    .set({ progress: JSON.stringify(progress), updated_at: nowIso() })
    .where("id", "=", id)
    .where("status", "=", "running")
    .execute();
}

export async function failGeneration(core: Core, id: string, error: string, warnings: GenerationWarningRecord[]): Promise<void> {
  const t = nowIso();
  await core.db
    .updateTable("generations")
    .set({ status: "failed", error, warnings: JSON.stringify(warnings), finished_at: t, updated_at: t })
    .where("id", "=", id)
    .where("status", "=", "running")
    .execute();
  core.events.emit("generationFinished", id);
}

type AutomationRow = Selectable<AutomationTable>;

/** Drafts of earlier generations that nobody edited or activated: generating again replaces them. */
async function removeReplaceableDrafts(trx: Transaction<DB>, core: Core, featureId: string, generationId: string) {
  const earlier = await trx
    .selectFrom("automations")
    .select(["id", "project_id", "status", "edited"])
    .where("feature_id", "=", featureId)
    .where("source", "=", "generated")
    .where((eb) => eb.or([eb("generation_id", "is", null), eb("generation_id", "!=", generationId)]))
    .execute();
  const replace = earlier.filter((a) => a.status === "draft" && a.edited === 0).map((a) => a.id);
  const kept = earlier.length - replace.length;
  if (replace.length === 0) return { replaced: 0, kept };
  const t = nowIso();
  const active = await trx.selectFrom("runs").select("id").where("automation_id", "in", replace).where("status", "in", ["queued", "running"]).execute();
  for (const r of active) {
    await trx
      .updateTable("runs")
      .set({ status: "cancelled", error: "the automation was replaced by a new generation", finished_at: t, updated_at: t })
      .where("id", "=", r.id)
      .where("status", "in", ["queued", "running"])
      .execute();
    core.events.emit("runCancelled", r.id);
  }
  const projectId = earlier[0]?.project_id ?? "";
  const groups = await trx.selectFrom("groups").select(["id", "automation_ids"]).where("project_id", "=", projectId).execute();
  for (const g of groups) {
    const ids = readJsonColumn(StringList, g.automation_ids, `automation_ids of group ${g.id}`);
    const left = ids.filter((id) => !replace.includes(id));
    if (left.length !== ids.length) {
      await trx
        .updateTable("groups")
        .set({ automation_ids: JSON.stringify(left), updated_at: t })
        .where("id", "=", g.id)
        .execute();
    }
  }
  await trx.deleteFrom("automations").where("id", "in", replace).execute();
  return { replaced: replace.length, kept };
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
  const done = await core.db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("generations").select("status").where("id", "=", job.id).executeTakeFirst();
    if (current?.status !== "running") return false;
    const { replaced, kept } = await removeReplaceableDrafts(trx, core, job.feature.id, job.id);
    const t = nowIso();
    const ids: string[] = [];
    for (const d of drafts) {
      const row: AutomationRow = {
        id: newId("aut"),
        project_id: job.projectId,
        feature_id: job.feature.id,
        generation_id: job.id,
        name: d.name,
        description: d.description,
        kind: d.kind,
        steps: JSON.stringify(d.steps),
        environment_id: null,
        tags: JSON.stringify(d.tags),
        status: "draft",
        source: "generated",
        edited: 0,
        timeout_ms: core.config.runner.default_timeout_ms,
        retries: 0,
        last_run_id: null,
        last_run_status: null,
        last_run_at: null,
        created_at: t,
        updated_at: t,
      };
      await trx.insertInto("automations").values(row).execute();
      ids.push(row.id);
    }
    const result = `${summary} Created ${plural(drafts.length, "draft automation")}; replaced ${plural(replaced, "unedited draft")} of earlier generations; kept ${plural(kept, "edited or activated automation")} of earlier generations.`;
    await trx
      .updateTable("generations")
      .set({
        status: "succeeded",
        automation_ids: JSON.stringify(ids),
        warnings: JSON.stringify(warnings),
        result,
        progress: JSON.stringify({ stage: "done", done: drafts.length, total: drafts.length }),
        finished_at: t,
        updated_at: t,
      })
      .where("id", "=", job.id)
      .where("status", "=", "running")
      .execute();
    return true;
  });
  if (done) core.events.emit("generationFinished", job.id);
  return done;
}

/** At start no generation can really be running: those a dead process left `running` end `failed`. */
export async function recoverInterruptedGenerations(core: Core): Promise<number> {
  const t = nowIso();
  const res = await core.db
    .updateTable("generations")
    .set({ status: "failed", error: INTERRUPTED_GENERATION_MESSAGE, finished_at: t, updated_at: t })
    .where("status", "=", "running")
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/** True while the job may still write: used to stop a job whose record was cancelled in another process. */
export async function generationStillRunning(core: Core, id: string): Promise<boolean> {
  const row = await core.db.selectFrom("generations").select("status").where("id", "=", id).executeTakeFirst();
  return row?.status === "running";
}
