// JSON columns, read through the schema of what they hold: a damaged value is a clear error naming the record and
// the column, never a silently wrong answer (no steps, no variables) that looks like real data.
import type { z } from "zod";
import { AppError } from "../../manifest/errors";

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

function parseStored<S extends z.ZodType>(schema: S, text: string): Parsed<z.output<S>> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { ok: false, problem: `not JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  const checked = schema.safeParse(raw);
  if (checked.success) return { ok: true, value: checked.data };
  const issue = checked.error.issues[0];
  const at = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  return { ok: false, problem: `${issue?.message ?? "not the expected shape"}${at}` };
}

/** A stored JSON value whose text is not what its column holds. */
export class DamagedColumnError extends AppError {
  constructor(where: string, problem: string) {
    super("internal_error", `the stored ${where} is damaged (${problem}); restore it from a backup or save it again`);
  }
}

/**
 * The value of a JSON column, checked against its schema. `where` names it for people: `steps of automation
 * aut_…`. Throws DamagedColumnError (a 500 `internal_error` carrying that message) when the text is damaged.
 */
export function readJsonColumn<S extends z.ZodType>(schema: S, text: string, where: string): z.output<S> {
  const parsed = parseStored(schema, text);
  if (!parsed.ok) throw new DamagedColumnError(where, parsed.problem);
  return parsed.value;
}

/**
 * The value of a JSON column, or `fallback` when it is damaged: only for the run queue's claim, where one
 * damaged row must not fail the claim of every run taken with it (the run then fails on its own, and says why).
 */
export function readJsonColumnOr<S extends z.ZodType>(schema: S, text: string, fallback: z.output<S>): z.output<S>;
export function readJsonColumnOr<S extends z.ZodType>(schema: S, text: string, fallback: null): z.output<S> | null;
export function readJsonColumnOr<S extends z.ZodType>(schema: S, text: string, fallback: z.output<S> | null): z.output<S> | null {
  const parsed = parseStored(schema, text);
  return parsed.ok ? parsed.value : fallback;
}
