// The one error the client raises: an API error body, or a network/timeout/bad-response problem in the same shape.
import { ERROR_TABLE, type ErrorCode } from "../manifest/errors";

/** Codes the client itself adds for problems that never reached (or never came back from) the API. */
export type ClientSideCode = "network_error" | "timeout" | "invalid_response";

export class ClientError extends Error {
  constructor(
    /** HTTP status, or 0 when no response arrived. */
    readonly status: number,
    readonly error: ErrorCode | ClientSideCode | string,
    message: string,
    readonly details?: { path: string; message: string }[],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  toJSON(): { status: number; error: string; message: string; details?: { path: string; message: string }[]; retry_after_seconds?: number } {
    return {
      status: this.status,
      error: this.error,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
      ...(this.retryAfterSeconds !== undefined ? { retry_after_seconds: this.retryAfterSeconds } : {}),
    };
  }
}

/** The CLI exit code for an error: the manifest's table for API codes, else by status; 6 for anything that is the server's or network's fault. */
export function exitCodeFor(e: ClientError): number {
  if (e.error in ERROR_TABLE) return ERROR_TABLE[e.error as ErrorCode].exit;
  if (e.status === 401 || e.status === 403) return 3;
  if (e.status === 404) return 4;
  if (e.status === 429) return 5;
  if (e.status >= 400 && e.status < 500) return 2;
  return 6;
}
