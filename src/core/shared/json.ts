// JSON columns, read through the schema of what they hold: a damaged value is a clear error naming the record and
// the column, never a silently wrong answer (no steps, no variables) that looks like real data.
import type { z } from "zod";
import { AppError } from "../../manifest/errors";
import { TextMemo } from "../../memo";

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Short texts recur (`[]`, `{}`, a new run's summary, its starter): each schema keeps what its short texts parse to
 * for readers that only answer them (readSharedJsonColumn), deeply frozen so that none can change what the next one
 * gets. Listing a thousand runs parsed the same few texts thousands of times.
 */
const SHORT_TEXT = 256;
const parsedShort = new WeakMap<z.ZodType, TextMemo<Parsed<unknown>>>();

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

function parseShared<S extends z.ZodType>(schema: S, text: string): Parsed<z.output<S>> {
  if (text.length > SHORT_TEXT) return parseStored(schema, text);
  let memo = parsedShort.get(schema);
  if (!memo) {
    memo = new TextMemo(1000);
    parsedShort.set(schema, memo);
  }
  return memo.get(text, () => {
    const parsed = parseStored(schema, text);
    return parsed.ok ? { ok: true, value: deepFreeze(parsed.value) } : parsed;
  }) as Parsed<z.output<S>>;
}

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

/**
 * As readJsonColumn, for a reader that only answers the value (a run as the API shows it): a short text's value is
 * shared between readers and frozen.
 */
export function readSharedJsonColumn<S extends z.ZodType>(schema: S, text: string, where: string): z.output<S> {
  const parsed = parseShared(schema, text);
  if (!parsed.ok) throw new DamagedColumnError(where, parsed.problem);
  return parsed.value;
}

/** As readJsonColumnOr, for a reader that only answers the value (see readSharedJsonColumn). */
export function readSharedJsonColumnOr<S extends z.ZodType>(schema: S, text: string, fallback: null): z.output<S> | null {
  const parsed = parseShared(schema, text);
  return parsed.ok ? parsed.value : fallback;
}
