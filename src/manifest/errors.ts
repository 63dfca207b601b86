// The closed set of error codes and the one table mapping each to its HTTP status, CLI exit code and MCP result.
// Exit codes: 0 success, 1 a watched run or generation that did not pass, 2 usage (the request cannot be done as
// asked: invalid input, a conflict with the current state, a stale If-Match), 3 authentication (401) or not allowed (403),
// 4 not found, 5 rate limited after retries, 6 server or network error. The MCP server never exits over an API
// error: it answers a tool result with isError set, carrying the code and status.
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

/**
 * A union's "Invalid input" says nothing useful. When only some of its alternatives were of the right kind
 * (the others failed on the value's type itself), their issues are what the caller needs: a malformed
 * condition string, or the missing field of the object it was meant to be.
 */
function explain(issue: Issue, base: PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  const path = [...base, ...issue.path];
  if (issue.code === "invalid_union" && "errors" in issue && Array.isArray(issue.errors) && issue.errors.length > 0) {
    const branches = (issue.errors as Issue[][]).filter((b) => !b.every((i) => i.code === "invalid_type" && i.path.length === 0));
    if (branches.length > 0) {
      const best = branches.reduce((a, b) => (b.length < a.length ? b : a));
      return best.flatMap((i) => explain(i, path));
    }
    // Of no alternative's type: say which types would do.
    const expected = [
      ...new Set(
        (issue.errors as Issue[][])
          .flat()
          .map((i) => ("expected" in i ? String(i.expected) : ""))
          .filter(Boolean),
      ),
    ];
    if (expected.length > 0) return [{ path, message: `expected ${expected.join(" or ")}` }];
  }
  return [{ path, message: issue.message }];
}

export function zodDetails(error: z.ZodError, prefix = ""): ErrorDetail[] {
  return error.issues
    .flatMap((i) => explain(i, []))
    .map((d) => ({
      path: [prefix, ...d.path.map(String)].filter(Boolean).join("."),
      message: d.message,
    }));
}
