// The one interface every generator implements: a feature and its project's context in, drafts and warnings out.
import type { Config } from "../../config/schema";
import type { GeneratedDraft, GenerationWarningRecord } from "../core/generations/queue";

export type GeneratorName = "gherkin" | "openapi" | "crawl" | "llm";

export type FeatureTarget = { kind: "web"; url: string } | { kind: "api"; tags: string[]; paths: string[] };

export interface GenerationInput {
  feature: { id: string; name: string; description: string; acceptance_criteria: string; target: FeatureTarget | null };
  /** The project's OpenAPI document of the system under test, when it has one. */
  openapi: Record<string, unknown> | null;
  config: Config["generation"];
}

export interface GeneratorRun {
  /** Aborted when the generation is cancelled or the server stops. */
  signal: AbortSignal;
  progress(done: number, total: number): Promise<void>;
}

export interface GeneratorOutput {
  automations: GeneratedDraft[];
  warnings: GenerationWarningRecord[];
}

export interface Generator {
  name: GeneratorName;
  /** Why this generator cannot run for the input (its input is missing), or null when it can. */
  missingInput(input: GenerationInput): string | null;
  generate(input: GenerationInput, run: GeneratorRun): Promise<GeneratorOutput>;
}

/** A problem that fails the whole job with a message for people (a provider timeout, an unreachable page). */
export class GenerationFailure extends Error {}
