// The openapi generator: http automations for the operations of the project's OpenAPI document the feature covers.
import type { GeneratedDraft, GenerationWarningRecord } from "../../core/generations/queue";
import type { Generator } from "../types";
import { coveredOperations, listOperations, readDocument } from "./operations";
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
    const doc = await readDocument(input.openapi);
    const ops = coveredOperations(listOperations(doc), target);
    const warnings: GenerationWarningRecord[] = [];
    if (ops.length === 0) {
      warnings.push({ generator: "openapi", message: `No operation of the OpenAPI document matches the feature's tags (${target.tags.join(", ") || "none"}) or paths (${target.paths.join(", ") || "none"})` });
      return { automations: [], warnings };
    }
    const schemes = isObject(doc.components) && isObject(doc.components.securitySchemes) ? doc.components.securitySchemes : {};
    const note = serverNote(doc);
    const automations: GeneratedDraft[] = [];
    for (const [i, op] of ops.entries()) {
      run.signal.throwIfAborted();
      const made = testsForOperation(op, schemes, note);
      automations.push(...made.automations);
      warnings.push(...made.warnings);
      await run.progress(i + 1, ops.length);
    }
    automations.push(...createThenRead(ops, schemes, note));
    return { automations, warnings };
  },
};
