// `--file`: a request body from a JSON or YAML file (or stdin), such as an automation kept in the repository.
import { readFileSync } from "node:fs";
import type { FieldInfo } from "../src/client/schema-fields";
import { UsageError } from "./usage";

/** Fields a record has but a request does not take: dropped so `show --json > f; edit; update --file f` works. */
const RECORD_ONLY = [
  "id",
  "created_at",
  "updated_at",
  "project_id",
  "generation_id",
  "source",
  "last_run",
  "feature_id",
  "environment_id",
  "secret_names",
  "has_openapi",
  "key",
  "health",
];

/**
 * `recordFields`: the fields of the record the operation answers (what `show --json` printed). Those the request
 * does not take are dropped too, and so is a null the request would refuse where the record has the field (a
 * schedule's `cron` when it runs every N seconds): the file is a record, edited. Anything else unknown is left for
 * the server to refuse, so a misspelt field is still told.
 */
export async function readRequestFile(path: string, bodyFields: FieldInfo[], recordFields: string[] = []): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = path === "-" ? await new Response(Bun.stdin.stream()).text() : readFileSync(path, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read ${path}: ${(e as Error).message}`);
  }
  let value: unknown;
  if (/\.ya?ml$/i.test(path) || !/^\s*[[{]/.test(text)) {
    const { parse } = await import("yaml");
    try {
      value = parse(text);
    } catch (e) {
      throw new UsageError(`${path} is not valid YAML: ${(e as Error).message}`);
    }
  } else {
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new UsageError(`${path} is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`${path} must hold one object (the request body)`);
  const body = { ...(value as Record<string, unknown>) };
  const takes = new Map(bodyFields.map((f) => [f.name, f]));
  for (const k of [...RECORD_ONLY, ...recordFields]) {
    const field = takes.get(k);
    if (!field) delete body[k];
    else if (body[k] === null && !field.nullable && recordFields.includes(k)) delete body[k];
  }
  return body;
}
