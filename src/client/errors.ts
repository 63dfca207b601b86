// The one error the client raises: an API error body, or a network/timeout/bad-response problem in the same shape.
import { codeForStatus, ERROR_TABLE, type ErrorCode, isErrorCode } from "../manifest/errors";

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

/** The CLI exit code for an error, from the manifest's table: by its code, else by its status; no response at all is the network's fault. */
export function exitCodeFor(e: ClientError): number {
  if (isErrorCode(e.error)) return ERROR_TABLE[e.error].exit;
  return ERROR_TABLE[e.status >= 400 ? codeForStatus(e.status) : "internal_error"].exit;
}

/** Whether an MCP tool result for this error is marked isError, from the manifest's table. */
export function mcpIsErrorFor(e: ClientError): boolean {
  if (isErrorCode(e.error)) return ERROR_TABLE[e.error].mcpIsError;
  return ERROR_TABLE[e.status >= 400 ? codeForStatus(e.status) : "internal_error"].mcpIsError;
}
