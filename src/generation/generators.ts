// The generators in the order `auto` runs them, and how a strategy picks among them.
import { GenerationFailure, type GenerationInput, type Generator } from "./types";
import { gherkinGenerator } from "./gherkin/generator";
import { openapiGenerator } from "./openapi/generator";
import { crawlGenerator } from "./crawl/generator";
import { llmGenerator } from "./llm/generator";

export const GENERATORS: Generator[] = [gherkinGenerator, openapiGenerator, crawlGenerator, llmGenerator];

/** `auto` takes every generator that has input; a named strategy takes its one generator or fails clearly. */
export function chooseGenerators(strategy: string, input: GenerationInput): Generator[] {
  if (strategy === "auto") {
    const usable = GENERATORS.filter((g) => g.missingInput(input) === null);
    if (usable.length === 0) {
      const why = GENERATORS.map((g) => `${g.name}: ${g.missingInput(input)}`).join("; ");
      throw new GenerationFailure(`nothing to generate from (${why})`);
    }
    return usable;
  }
  const named = GENERATORS.find((g) => g.name === strategy);
  if (!named) throw new GenerationFailure(`unknown strategy "${strategy}"`);
  const missing = named.missingInput(input);
  if (missing) throw new GenerationFailure(`the ${strategy} strategy cannot run: ${missing}`);
  return [named];
}
