// Every non-2xx response: the JSON error shape, with the request id so a 500 can be found in the log.
import { AppError, type ErrorCode, ERROR_TABLE } from "../manifest/errors";
import { storageErrorKind } from "../core/storage-errors";
import { log } from "../logging";

export function errorResponse(
  code: ErrorCode,
  message: string,
  extra: { details?: unknown[]; headers?: Record<string, string>; requestId?: string } = {},
): Response {
  const body: Record<string, unknown> = { error: code, message };
  if (extra.details) body.details = extra.details;
  if (extra.requestId) body.request_id = extra.requestId;
  return new Response(JSON.stringify(body), {
    status: ERROR_TABLE[code].status,
    headers: { "content-type": "application/json; charset=utf-8", ...extra.headers },
  });
}

/** Maps anything thrown by a handler to a response; unexpected errors are logged with the request id. */
export function responseForError(e: unknown, requestId: string): Response {
  if (e instanceof AppError) {
    // Every 503 says when to ask again: what is unavailable (an artifact's bucket, say) is expected back soon.
    return errorResponse(e.code, e.message, { details: e.details, requestId, ...(e.code === "unavailable" ? { headers: { "retry-after": "5" } } : {}) });
  }
  const storage = storageErrorKind(e);
  if (storage === "busy") {
    return errorResponse("unavailable", "the database is busy; retry shortly", { requestId, headers: { "retry-after": "1" } });
  }
  if (storage === "disk_full") {
    // SQLite rolled the statement back: nothing was half-written, and the operator must free space.
    log.error("the disk holding the database is full: writes are refused until space is freed", { request_id: requestId });
    return errorResponse("unavailable", "the server's disk is full, so the change was not saved; retry once the operator has freed space", {
      requestId,
      headers: { "retry-after": "60" },
    });
  }
  log.error("unhandled error", { request_id: requestId, error: (e as Error)?.message ?? String(e), stack: (e as Error)?.stack });
  return errorResponse("internal_error", `internal error; quote request id ${requestId} to find it in the server log`, { requestId });
}
