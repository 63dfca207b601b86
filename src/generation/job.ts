// One generation job: picks its generators, runs them with progress, checks their drafts and stores them.
import type { Core } from "../core/context";
import {
  type ClaimedGeneration,
  completeGeneration,
  failGeneration,
  type GeneratedDraft,
  type GenerationWarningRecord,
  recordGenerationProgress,
} from "../core/generations/queue";
import { OpenApiColumn, TargetColumn } from "../core/shared/columns";
import { readJsonColumn } from "../core/shared/json";
import { log } from "../logging";
import { draftTooBig, GENERATION_FULL, OutputMeter, yieldToEventLoop } from "./bounds";
import { checkDraft, describeProblems } from "./draft-check";
import { chooseGenerators } from "./generators";
import { GenerationFailure, type GenerationInput } from "./types";

function inputOf(core: Core, job: ClaimedGeneration): GenerationInput {
  const f = job.feature;
  return {
    feature: {
      id: f.id,
      name: f.name,
      description: f.description,
      acceptance_criteria: f.acceptance_criteria,
      target: f.target === null ? null : readJsonColumn(TargetColumn, f.target, `target of feature ${f.id}`),
    },
    openapi: job.openapiText === null ? null : readJsonColumn(OpenApiColumn, job.openapiText, `OpenAPI document of project ${job.projectId}`),
    config: core.config.generation,
  };
}

/** Names must be unique within one generation so a person can tell the drafts apart. */
function uniqueNames(drafts: GeneratedDraft[]): GeneratedDraft[] {
  const seen = new Map<string, number>();
  return drafts.map((d) => {
    const n = (seen.get(d.name) ?? 0) + 1;
    seen.set(d.name, n);
    return n === 1 ? d : { ...d, name: `${d.name.slice(0, 190)} (${n})` };
  });
}

export async function runGenerationJob(core: Core, job: ClaimedGeneration, signal: AbortSignal): Promise<void> {
  const warnings: GenerationWarningRecord[] = [];
  try {
    const input = inputOf(core, job);
    const generators = chooseGenerators(job.strategy, input);
    const drafts: GeneratedDraft[] = [];
    const counts: string[] = [];
    const meter = new OutputMeter();
    let overflow = 0;
    for (const g of generators) {
      signal.throwIfAborted();
      await recordGenerationProgress(core, job.id, { stage: g.name, done: 0, total: 0 });
      const out = await g.generate(input, {
        signal,
        progress: (done, total) => recordGenerationProgress(core, job.id, { stage: g.name, done, total }),
      });
      signal.throwIfAborted();
      let made = 0;
      for (const a of out.automations) {
        // Measured before it is checked: checking an oversized draft would cost what the bound is there to avoid.
        const verdict = overflow > 0 ? "full" : meter.admit(a);
        if (verdict === "full") {
          overflow++;
          continue;
        }
        if (verdict === "too big") {
          warnings.push({ generator: g.name, message: draftTooBig(a.name) });
          continue;
        }
        await yieldToEventLoop();
        // Every generator already builds valid drafts; checking again here keeps a bad one out of the database.
        const checked = checkDraft(a);
        if ("problems" in checked) {
          warnings.push({ generator: g.name, message: `Left out "${a.name}": not a valid automation (${describeProblems(checked.problems)})` });
          continue;
        }
        drafts.push(checked.draft);
        made++;
      }
      warnings.push(...out.warnings.map((w) => ({ ...w, generator: w.generator ?? g.name })));
      counts.push(`${g.name}: ${made}`);
    }
    if (overflow > 0) warnings.push({ message: `Left out the last ${overflow} drafts: ${GENERATION_FULL}` });
    await recordGenerationProgress(core, job.id, { stage: "saving", done: 0, total: drafts.length });
    const summary = `Ran ${generators.map((g) => g.name).join(", ")} (${counts.join(", ")}).`;
    const stored = await completeGeneration(core, job, uniqueNames(drafts), warnings, summary);
    if (!stored) log.info("generation no longer running; its drafts were not stored", { generation: job.id });
  } catch (e) {
    if (signal.aborted) {
      // Cancelled (the record already says so) or the server is stopping: never overwrite a cancelled record.
      await failGeneration(core, job.id, "the server stopped while the generation was running", warnings);
      return;
    }
    if (e instanceof GenerationFailure) {
      await failGeneration(core, job.id, e.message, warnings);
      return;
    }
    log.error("generation failed unexpectedly", { generation: job.id, error: (e as Error).message });
    await failGeneration(core, job.id, `internal error: ${(e as Error).message}`, warnings);
  }
}
