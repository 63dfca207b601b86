// What each JSON column holds, as schemas: the manifest's records where the API returns the value as stored.
import { z } from "zod";
import { AutomationKind, type Step } from "../../manifest/automation-format";
import { FeatureTarget, Generation, GenerationWarning, GroupRun, Project, RunStatus, RunSummary, StepResult } from "../../manifest/records";
import { TextMemo } from "../../memo";
import { readJsonColumnOr } from "./json";

export const StringList = z.array(z.string());
export const StringMap = z.record(z.string(), z.string());

/** projects.openapi */
export const OpenApiColumn = Project.shape.openapi.unwrap().unwrap();
/** features.target */
export const TargetColumn = FeatureTarget;
/** generations.progress, generations.warnings */
export const ProgressColumn = Generation.shape.progress;
export const WarningsColumn = z.array(GenerationWarning);

/**
 * automations.steps and the steps of a run's snapshot. Each was parsed by the Step schema when saved; parsing it
 * again on every read would re-run the saving checks (patterns, JSON Schemas, locators), and the run engine checks
 * steps again before running them (src/runner/engine.ts). So a read checks only that each step is an object.
 */
export const StepsColumn = z.array(z.custom<Step>((v) => typeof v === "object" && v !== null && !Array.isArray(v), "expected a step object"));

/** runs.spec: what a run executes, a snapshot of the automation taken when it was queued. */
export const RunSpecColumn = z.object({
  kind: AutomationKind,
  steps: StepsColumn,
  timeout_ms: z.number(),
  retries: z.number(),
});
export type RunSpec = z.infer<typeof RunSpecColumn>;

/** runs.attempts. Runs recorded before attempts carried a message have none. */
export const AttemptsColumn = z.array(
  z.object({
    attempt: z.number().int(),
    status: RunStatus,
    error: z.string().nullable(),
    message: z.string().nullable().optional(),
    duration_ms: z.number(),
  }),
);
/** runs.summary */
export const SummaryColumn = RunSummary;
/** runs.results */
export const ResultsColumn = z.object({ steps: z.array(StepResult).optional(), artifacts: z.array(z.string()).optional() });
/** group_runs.summary: the summary stored with its verdict when it ended. */
export const GroupSummaryColumn = GroupRun.shape.summary;

/**
 * A run's snapshot from its stored text, read once per distinct text (the same automations run again and again:
 * group runs, schedules); null when it is damaged (the run then fails on its own and says why). Callers share what
 * they get and never change it.
 */
const runSpecs = new TextMemo<RunSpec | null>(5000);
export function readRunSpec(text: string): RunSpec | null {
  return runSpecs.get(text, () => readJsonColumnOr(RunSpecColumn, text, null));
}
