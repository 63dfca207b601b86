// The closed set of error codes and the one table mapping each to its HTTP status, CLI exit code and MCP result.
// Exit codes: 0 success, 1 a watched run or generation that did not pass (or a drift `svc apply --dry-run
// --exit-code` found), 2 usage (the request cannot be done as asked: invalid input, a conflict with the current
// state, a stale If-Match), 3 authentication (401) or not allowed (403), 4 not found, 5 rate limited after retries,
// 6 server or network error. The MCP server never exits over an API error: it answers a tool result with isError
// set, carrying the code and status.
import { z } from "zod";

export const ERROR_TABLE = {
  invalid_request: { status: 400, exit: 2, mcpIsError: true },
  unauthorized: { status: 401, exit: 3, mcpIsError: true },
  forbidden: { status: 403, exit: 3, mcpIsError: true },
  not_found: { status: 404, exit: 4, mcpIsError: true },
  method_not_allowed: { status: 405, exit: 2, mcpIsError: true },
  conflict: { status: 409, exit: 2, mcpIsError: true },
  precondition_failed: { status: 412, exit: 2, mcpIsError: true },
  payload_too_large: { status: 413, exit: 2, mcpIsError: true },
  unsupported_media_type: { status: 415, exit: 2, mcpIsError: true },
  rate_limited: { status: 429, exit: 5, mcpIsError: true },
  internal_error: { status: 500, exit: 6, mcpIsError: true },
  unavailable: { status: 503, exit: 6, mcpIsError: true },
} as const satisfies Record<string, { status: number; exit: number; mcpIsError: boolean }>;

export type ErrorCode = keyof typeof ERROR_TABLE;

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_TABLE, code);

/**
 * The code for a status when a response carries none of its own (a proxy's error page): the table's code for
 * that status, else internal_error for a 5xx and invalid_request for any other.
 */
export function codeForStatus(status: number): ErrorCode {
  for (const [code, row] of Object.entries(ERROR_TABLE)) if (row.status === status) return code as ErrorCode;
  return status >= 500 ? "internal_error" : "invalid_request";
}

export const ErrorBody = z
  .object({
    error: z.string().describe("A machine-readable error code"),
    message: z.string().describe("Human-readable text"),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    request_id: z.string().optional(),
  })
  .meta({ id: "Error" });
export type ErrorBody = z.infer<typeof ErrorBody>;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** The one error type of the core: a code from the table, a message for people, optional details. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }
  get status(): number {
    return ERROR_TABLE[this.code].status;
  }
  toBody(): ErrorBody {
    return { error: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) };
  }
}

export const notFound = (what: string) => new AppError("not_found", `${what} not found`);
export const conflict = (message: string) => new AppError("conflict", message);
export const forbidden = (message: string) => new AppError("forbidden", message);
export const invalid = (message: string, details?: ErrorDetail[]) => new AppError("invalid_request", message, details);

export const UNAUTHORIZED_MESSAGE = "A valid API key is required as a Bearer token in the Authorization header (Authorization: Bearer svc_…).";

/** Turns zod issues into the `details` of a 400. */
type Issue = z.core.$ZodIssue;

const isMissing = (i: Issue): boolean =>
  (i.code === "invalid_type" && (/^required \(/.test(i.message) || / received undefined$/.test(i.message))) ||
  (i.code === "invalid_union" && "errors" in i && (i.errors as Issue[][]).every((b) => b.every((x) => x.path.length === 0 && isMissing(x))));

/** The type a value was given as, from zod's "…, received X" (the issue does not carry the value). */
const receivedOf = (i: Issue): string | null => /received (\w+)$/.exec(i.message)?.[1] ?? null;

/**
 * How far the value is from being an alternative of a union, by its issues: of the wrong type altogether, worst; with
 * keys the alternative does not know, next; missing one of its fields, next; any other problem inside it, least. The
 * closest alternative is the one the person meant, and its issues are the ones to show.
 */
function distance(issues: Issue[]): number {
  let d = 0;
  for (const i of issues) {
    if (i.path.length === 0 && i.code === "invalid_union" && "errors" in i) d += Math.min(...(i.errors as Issue[][]).map(distance));
    else if (i.path.length === 0 && i.code === "invalid_type") d += 10_000;
    // Each key it does not know: an alternative that knows more of the value's keys is the closer one.
    else if (i.path.length === 0 && i.code === "unrecognized_keys") d += 1000 * ("keys" in i ? Math.max(1, (i.keys as string[]).length) : 1);
    else if (i.path.length === 1 && isMissing(i)) d += 100;
    else d += 1;
  }
  return d;
}

/** The fields an alternative of a union is known by: its required fields the value lacks (nested unions flattened). */
function requiredOf(issues: Issue[]): string[] {
  return issues.flatMap((i) =>
    i.path.length === 0 && i.code === "invalid_union" && "errors" in i
      ? (i.errors as Issue[][]).flatMap(requiredOf)
      : i.path.length === 1 && isMissing(i)
        ? [String(i.path[0])]
        : [],
  );
}

/** The unknown keys of a value every alternative refused. */
function unknownKeysOf(issues: Issue[]): string[] {
  return issues.flatMap((i) =>
    i.path.length === 0 && i.code === "invalid_union" && "errors" in i
      ? (i.errors as Issue[][]).flatMap(unknownKeysOf)
      : i.path.length === 0 && i.code === "unrecognized_keys" && "keys" in i
        ? (i.keys as string[])
        : [],
  );
}

/** How many one-character edits turn `a` into `b` (Levenshtein): what "did you mean" suggestions are measured by. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j] as number;
      row[j] = next;
    }
  }
  return row[b.length] as number;
}

const quoted = (keys: string[]) => keys.map((k) => `"${k}"`).join(", ");

/** An unknown key, with the known one it is probably a typo of. */
function unknownKeyMessage(unknown: string[], known: string[], orString: boolean): string {
  const guess = unknown.length === 1 ? known.find((k) => editDistance(k, unknown[0] as string) <= Math.max(1, Math.floor(k.length / 3))) : undefined;
  return `unknown field${unknown.length === 1 ? "" : "s"} ${quoted(unknown)}${guess ? ` (did you mean "${guess}"?)` : ""}: expected ${orString ? "a string, or " : ""}one of ${known.join(", ")}`;
}

/** The fields an object schema knows: read off the schema that refused a key, which zod hands to its error map. */
function fieldsOf(schema: unknown): string[] | null {
  const shape = (schema as { _zod?: { def?: { shape?: unknown } } } | undefined)?._zod?.def?.shape;
  return shape !== null && typeof shape === "object" ? Object.keys(shape) : null;
}

// An unknown field of an object says which field was probably meant, and the fields there are: the object's own
// message, made where zod still has the object's schema at hand (its issues no longer carry it).
z.config({
  customError: (issue) => {
    // A field left out says so wherever zod's own message reaches (an MCP client's argument check included), not
    // "Invalid input: expected string, received undefined".
    if (issue.code === "invalid_type" && issue.input === undefined) return `required (${String(issue.expected)})`;
    if (issue.code !== "unrecognized_keys") return undefined;
    const known = fieldsOf(issue.inst);
    return known && known.length > 0 ? unknownKeyMessage(issue.keys, known, false) : undefined;
  },
});

/** zod's "Too small: expected array to have >=1 items", in words: "needs at least 1 item", "must be at most 200". */
function bound(issue: Issue): string {
  const small = issue.code === "too_small";
  const limit = "minimum" in issue ? issue.minimum : "maximum" in issue ? issue.maximum : undefined;
  const n = Number(limit);
  const inclusive = !("inclusive" in issue) || issue.inclusive !== false;
  const origin = "origin" in issue ? String(issue.origin) : "";
  if (limit === undefined || !Number.isFinite(n)) return issue.message;
  const count = (word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (origin === "array" || origin === "set") return small ? `needs at least ${count("item")}` : `takes at most ${count("item")}`;
  if (origin === "string") return small ? `must be at least ${count("character")} long` : `must be at most ${count("character")} long`;
  if (small) return inclusive ? `must be at least ${n}` : `must be greater than ${n}`;
  return inclusive ? `must be at most ${n}` : `must be less than ${n}`;
}

/** zod's own wording, made to say what is wrong in the terms of the document (required, not, unknown). */
function plain(issue: Issue): string {
  if (isMissing(issue)) return "expected" in issue && issue.expected ? `required (${String(issue.expected)})` : "required";
  if ((issue.code === "too_small" || issue.code === "too_big") && /^Too (small|big)/.test(issue.message)) return bound(issue);
  if (issue.code === "invalid_type") {
    if (issue.expected === "int") return "expected a whole number";
    const received = receivedOf(issue);
    // A query value coerced to a number that is none (`?wait=abc`): "not NaN" names our coercion, not their value.
    if (received === "NaN") return issue.expected === "number" ? "expected a number" : `expected ${String(issue.expected)}`;
    return received ? `expected ${String(issue.expected)}, not ${received}` : issue.message;
  }
  if (issue.code === "unrecognized_keys" && "keys" in issue)
    return issue.message.startsWith("unknown field") ? issue.message : `unknown field${issue.keys.length === 1 ? "" : "s"} ${quoted(issue.keys as string[])}`;
  if (issue.code === "invalid_value" && "values" in issue && Array.isArray(issue.values) && issue.values.length > 1) {
    return `expected one of ${issue.values.map(String).join(", ")}`;
  }
  return issue.message;
}

/**
 * A union's "Invalid input" says nothing useful. The alternative closest to the value (see distance) is the one
 * meant: its issues are what the caller needs — a malformed condition string, the missing field of the object it
 * was meant to be. When none is close (every alternative refuses a key), the unknown key is named with the fields
 * that would do; when several are equally close for lack of their one field, that field's choices are named.
 */
/** An issue explained: its path, its message, and for an unknown key the key's own path (where a file shows it). */
type Explained = { path: PropertyKey[]; message: string; at?: PropertyKey[] };

function explain(issue: Issue, base: PropertyKey[]): Explained[] {
  const path = [...base, ...issue.path];
  if (issue.code === "invalid_union" && "errors" in issue && Array.isArray(issue.errors) && issue.errors.length > 0) {
    const all = issue.errors as Issue[][];
    const branches = all.filter((b) => !b.every((i) => i.code === "invalid_type" && i.path.length === 0));
    if (branches.length > 0) {
      const scored = branches.map((b) => ({ b, d: distance(b) }));
      const best = Math.min(...scored.map((x) => x.d));
      const closest = scored.filter((x) => x.d === best).map((x) => x.b);
      const known = [...new Set(branches.flatMap(requiredOf))];
      const unknown = [...new Set(closest.flatMap(unknownKeysOf))];
      // Unless the closest alternative knows keys the others refuse (an http step with one misspelt field): then its
      // own problems are the ones meant.
      const knowsMore = Math.max(...branches.map((b) => new Set(unknownKeysOf(b)).size)) > unknown.length;
      if (best >= 1000 && unknown.length > 0 && known.length > 0 && !knowsMore) {
        const strings = all.some((b) => b.some((i) => i.code === "invalid_type" && i.path.length === 0 && "expected" in i && i.expected === "string"));
        return [{ path, message: unknownKeyMessage(unknown, known, strings), at: [...path, unknown[0] as string] }];
      }
      const choices = [...new Set(closest.flatMap(requiredOf))];
      if (closest.length > 1 && choices.length > 1 && best < 1000) return [{ path, message: `needs one of ${choices.join(", ")}` }];
      return (closest[0] ?? []).flatMap((i) => explain(i, path));
    }
    // Of no alternative's type: say which types would do.
    const expected = [
      ...new Set(
        all
          .flat()
          .map((i) => ("expected" in i ? String(i.expected) : ""))
          .filter(Boolean),
      ),
    ];
    const received = all.flat().map(receivedOf).find(Boolean);
    if (expected.length > 0) return [{ path, message: `expected ${expected.join(" or ")}${received ? `, not ${received}` : ""}` }];
  }
  if (issue.code === "invalid_key" && "issues" in issue && Array.isArray(issue.issues) && issue.issues.length > 0) {
    return [{ path, message: `invalid name "${String(path[path.length - 1])}": ${(issue.issues as Issue[]).map(plain).join("; ")}` }];
  }
  if (issue.code === "unrecognized_keys" && "keys" in issue && issue.keys.length > 0)
    return [{ path, message: plain(issue), at: [...path, issue.keys[0] as string] }];
  return [{ path, message: plain(issue) }];
}

/** Each issue as the caller needs it (a union's closest alternative, an unknown key with the fields that would do), with its path. */
export function explainIssues(error: z.ZodError): Explained[] {
  return error.issues.flatMap((i) => explain(i, []));
}

export function zodDetails(error: z.ZodError, prefix = ""): ErrorDetail[] {
  return explainIssues(error).map((d) => ({
    path: [prefix, ...d.path.map(String)].filter(Boolean).join("."),
    message: d.message,
  }));
}
