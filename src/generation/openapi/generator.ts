// The openapi generator: http automations for the operations of the project's OpenAPI document the feature covers.
import type { GeneratedDraft, GenerationWarningRecord } from "../../core/generations/queue";
import { draftTooBig, GENERATION_FULL, OutputMeter, yieldToEventLoop } from "../bounds";
import type { Generator } from "../types";
import { type ApiOperation, coveredOperations, operationEntries, readDocument, readOperation } from "./operations";
import { createThenRead, testsForOperation } from "./tests";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function serverNote(doc: Obj): string {
  const first = Array.isArray(doc.servers) && isObject(doc.servers[0]) ? doc.servers[0].url : undefined;
  return typeof first === "string"
    ? `URLs are relative to the API's server: set the environment's BASE_URL to it (the document names ${first}).`
    : "URLs are relative to the API's server: set the environment's BASE_URL to it.";
}

export const openapiGenerator: Generator = {
  name: "openapi",
  missingInput(input) {
    if (!input.openapi) return "the project has no OpenAPI document (set one with update_project)";
    if (input.feature.target?.kind !== "api") return 'the feature names no API operations (set its target to {"kind": "api", "tags": […], "paths": […]})';
    return null;
  },
  async generate(input, run) {
    const target = input.feature.target;
    if (!input.openapi || target?.kind !== "api") return { automations: [], warnings: [] };
    const document = await readDocument(input.openapi);
    const { doc, refs } = document;
    const entries = coveredOperations(operationEntries(document), target);
    const warnings: GenerationWarningRecord[] = [];
    if (entries.length === 0) {
      warnings.push({
        generator: "openapi",
        message: `No operation of the OpenAPI document matches the feature's tags (${target.tags.join(", ") || "none"}) or paths (${target.paths.join(", ") || "none"})`,
      });
      return { automations: [], warnings };
    }
    const declared = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
    const schemes = Object.fromEntries(Object.entries(declared).map(([name, s]) => [name, refs.deref(s)]));
    const note = serverNote(doc);
    const automations: GeneratedDraft[] = [];
    const meter = new OutputMeter();
    /** Keeps the drafts that fit; false once the generation's output bound is reached. */
    const keep = (drafts: GeneratedDraft[], done: number): boolean => {
      for (const d of drafts) {
        const verdict = meter.admit(d);
        if (verdict === "too big") warnings.push({ generator: "openapi", message: draftTooBig(d.name) });
        if (verdict === "full") {
          warnings.push({ generator: "openapi", message: `Stopped after operation ${done} of ${entries.length}: ${GENERATION_FULL}` });
          return false;
        }
        if (verdict === "fits") automations.push(d);
      }
      return true;
    };
    const ops: ApiOperation[] = [];
    for (const [i, entry] of entries.entries()) {
      run.signal.throwIfAborted();
      const op = readOperation(document, entry);
      ops.push(op);
      const made = testsForOperation(op, schemes, note);
      warnings.push(...made.warnings);
      if (!keep(made.automations, i)) return { automations, warnings };
      await run.progress(i + 1, entries.length);
      await yieldToEventLoop();
    }
    const chains = createThenRead(ops, schemes, note);
    warnings.push(...chains.warnings);
    keep(chains.automations, entries.length);
    return { automations, warnings };
  },
};
