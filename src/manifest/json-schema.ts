// JSON Schemas of `schema` assertions: compiled when the automation is saved (so a bad one is a 400) and again
// by the run engine, with every `pattern` and `patternProperties` on the linear-time engine.
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { TextMemo } from "../memo";
import { ajvLinearRegExp } from "./patterns";

const ajv = new Ajv({ allErrors: false, strict: false, code: { regExp: ajvLinearRegExp } });
addFormats(ajv);

const compiledSchemas = new TextMemo<ValidateFunction | string>(500);

/** The compiled validator, or why the schema cannot be used. */
export function compileJsonSchema(schema: Record<string, unknown>): ValidateFunction | string {
  const key = JSON.stringify(schema);
  return compiledSchemas.get(key, () => {
    // A copy: ajv remembers schemas by object, and the caller's object may be changed or kept.
    const own = JSON.parse(key) as Record<string, unknown>;
    try {
      return ajv.compile(own);
    } catch (e) {
      return `the JSON Schema is invalid: ${(e as Error).message}`;
    } finally {
      // Every workspace's schemas share this instance: one schema's `$id` must not clash with another's.
      ajv.removeSchema(own);
    }
  });
}

/** Why the schema cannot be used, or null. */
export function jsonSchemaProblem(schema: Record<string, unknown>): string | null {
  const v = compileJsonSchema(schema);
  return typeof v === "string" ? v : null;
}
