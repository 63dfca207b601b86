// The one generic function that turns every manifest operation into a REST route: authentication, the
// workspace rate limit, validation with the operation's zod schemas, idempotency, the handler, the response.
import type { Elysia } from "elysia";
import { z } from "zod";
import { objectShape, unwrap } from "../client/schema-fields";
import type { Core, IdempotentStart, OpContext } from "../core/context";
import type { OpInput, RawBody } from "../core/handler";
import type { UntypedHandler } from "../core/registry";
import { checkCaller } from "../core/call";
import { parseBody, parsePathAndQuery } from "../core/input";
import { tagOfAnswer } from "../core/versions";
import { assertIdempotencyKey, findIdempotentAnswer, type IdempotentAnswer, idempotencyScope } from "../core/idempotency";
import { API_PREFIX } from "../manifest";
import type { Operation } from "../manifest/define";
import { AppError, UNAUTHORIZED_MESSAGE, zodDetails } from "../manifest/errors";
import { log } from "../logging";
import type { RequestBudget } from "../security/token-bucket";
import { authenticate, type SessionResolver } from "./auth";
import { errorResponse, responseForError } from "./errors";
import { eventStreamAnswer, wantsEventStream } from "./event-stream";
import { requestState } from "./request-state";
import { isCacheable, ResponseCache } from "./response-cache";
import { parseJsonBody, readBodyLimited } from "./body";
import { publicBaseUrl } from "./public-url";
import { CSRF_REFUSED } from "./web/csrf";

export interface MountOptions {
  core: Core;
  handlers: Map<string, UntypedHandler>;
  workspaceBuckets: RequestBudget | null;
  sessions?: SessionResolver;
  responses: ResponseCache;
  /** Check every response against the manifest (in tests), so core and manifest cannot drift apart. */
  validateResponses: boolean;
}

const JSON_TYPE = /^application\/([\w.+-]+\+)?json\b/i;

export const toElysiaPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

function rawResponse(status: number, raw: RawBody): Response {
  // Files are never pages: whatever a browser makes of one, it runs no script and loads nothing with svc's origin.
  const headers: Record<string, string> = {
    "content-type": raw.contentType,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox",
  };
  if (raw.filename) headers["content-disposition"] = `${raw.download ? "attachment" : "inline"}; filename="${raw.filename.replace(/"/g, "")}"`;
  return new Response(raw.body, { status, headers });
}

async function readBody(request: Request, op: Operation, maxBytes: number): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  const read = await readBodyLimited(request, maxBytes);
  if (!read.ok) return read;
  const buf = read.bytes;
  if (buf.byteLength === 0 || op.body === null) return { ok: true, value: undefined };
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type)) {
    return {
      ok: false,
      response: errorResponse("unsupported_media_type", `the request body must be JSON (Content-Type: application/json), not "${type || "none"}"`),
    };
  }
  const text = new TextDecoder("utf-8", { fatal: false }).decode(buf);
  if (text.trim() === "") return { ok: true, value: undefined };
  return parseJsonBody(text);
}

/** A map field's entry in a query key: dotted (`metadata.branch`) or as the OpenAPI document declares it (`metadata[branch]`). */
function mapEntryOf(key: string): { field: string; entry: string } | null {
  const bracket = /^([^.[\]]+)\[([^\]]+)\]$/.exec(key);
  if (bracket?.[1] && bracket[2]) return { field: bracket[1], entry: bracket[2] };
  const dot = key.indexOf(".");
  return dot > 0 ? { field: key.slice(0, dot), entry: key.slice(dot + 1) } : null;
}

/**
 * The query string as the operation's query schema reads it: a list field collects every repetition
 * (`?tag=a&tag=b`), a map field its keys (`?metadata.branch=main`, or `?metadata[branch]=main`, the deepObject
 * style the OpenAPI document declares for it, which generated clients send); any other field keeps its last value.
 */
export function queryObject(url: string, op: Operation): Record<string, unknown> {
  const q = url.indexOf("?");
  if (q < 0) return {};
  const shape = objectShape(op.query);
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) {
    const mapEntry = mapEntryOf(k);
    const mapField = mapEntry ? shape[mapEntry.field] : undefined;
    const mapShape = mapField ? unwrap(mapField).inner : null;
    if (mapEntry && mapShape instanceof z.ZodRecord) {
      const prev = out[mapEntry.field];
      out[mapEntry.field] = { ...(typeof prev === "object" && prev !== null ? prev : {}), [mapEntry.entry]: v };
      continue;
    }
    const field = shape[k];
    if (field && unwrap(field).inner instanceof z.ZodArray) {
      const prev = out[k];
      out[k] = [...(Array.isArray(prev) ? prev : []), v];
      continue;
    }
    out[k] = v;
  }
  return out;
}

function replayResponse(answer: IdempotentAnswer): Response {
  return new Response(answer.body, { status: answer.status, headers: { "content-type": "application/json; charset=utf-8", "idempotent-replayed": "true" } });
}

/**
 * An Idempotency-Key on an operation that starts work: a key already answered is answered again before any rule
 * runs (a replay is not refused because, say, the generation it started is still in progress); otherwise the
 * handler keeps its answer under the key inside its own transaction (core/idempotency.ts `startOnce`), which also
 * settles concurrent requests with one key. The response says whether it was a replay.
 */
async function withIdempotency(
  ctx: OpContext,
  op: Operation,
  request: Request,
  params: Record<string, unknown>,
  run: () => Promise<Response>,
): Promise<Response> {
  const key = request.headers.get("idempotency-key");
  if (!op.startsWork || key === null) return run();
  const checked = atEdge(() => assertIdempotencyKey(key));
  if (!checked.ok) return checked.response;
  // Scoped to the operation and the resource it resolves to, not the URL: by project id or slug, with or without a
  // trailing slash, the same key is the same start.
  const scope = await idempotencyScope(ctx, op.name, params);
  const stored = await findIdempotentAnswer(ctx, scope, key);
  if (stored) return replayResponse(stored);
  const start: IdempotentStart = { scope, key, status: op.successStatus, replayed: null };
  ctx.idempotency = start;
  const res = await run();
  return start.replayed ? replayResponse(start.replayed) : res;
}

async function setRateLimit(request: Request, opts: MountOptions, workspaceId: string, op: Operation): Promise<Response | null> {
  const state = requestState(request);
  if (state) state.workspaceId = workspaceId;
  if (!opts.workspaceBuckets || op.budgetExempt) return null;
  const verdict = await opts.workspaceBuckets.take(workspaceId);
  if (state) state.rateLimit = verdict;
  if (verdict.allowed) return null;
  return errorResponse("rate_limited", `the workspace's request budget (${verdict.limit}/h) is used up; retry after ${verdict.retryAfterSeconds} s`, {
    headers: { "retry-after": String(verdict.retryAfterSeconds) },
  });
}

/** What `check` returns, or its refusal as the edge answers it (no request id: nothing went wrong on the server). */
function atEdge<T>(check: () => T): { ok: true; value: T } | { ok: false; response: Response } {
  try {
    return { ok: true, value: check() };
  } catch (e) {
    if (e instanceof AppError) return { ok: false, response: errorResponse(e.code, e.message, e.details ? { details: e.details } : {}) };
    throw e;
  }
}

/** Throws when an answer (or a streamed event) does not match its schema in the manifest. */
function checkAnswer(operation: string, what: string, schema: z.ZodType, value: unknown): void {
  const check = schema.safeParse(value);
  if (check.success) return;
  log.error(`${what} does not match the manifest`, { operation, issues: zodDetails(check.error) });
  throw new Error(`${what} of ${operation} does not match the manifest: ${JSON.stringify(zodDetails(check.error))}`);
}

/** Serves one operation: the whole pipeline from an authenticated request to a JSON (or raw) response. */
export function operationHandler(op: Operation, opts: MountOptions) {
  const handler = opts.handlers.get(op.name);
  if (!handler) throw new Error(`operation ${op.name} has no handler`);
  const maxBytes = opts.core.config.max_body_bytes;
  const cacheable = isCacheable(op);
  return async (request: Request, rawParams: Record<string, string>): Promise<Response> => {
    const state = requestState(request);
    const requestId = state?.id ?? "unknown";
    if (state) state.operation = op.name;
    try {
      const principal = await authenticate(opts.core, request, opts.sessions);
      if (principal === "csrf_failed") {
        return errorResponse("forbidden", CSRF_REFUSED);
      }
      if (!principal) return errorResponse("unauthorized", UNAUTHORIZED_MESSAGE, { headers: { "www-authenticate": 'Bearer realm="svc"' } });
      const caller = atEdge(() => checkCaller(op, principal));
      if (!caller.ok) return caller.response;
      const limited = await setRateLimit(request, opts, principal.workspaceId, op);
      if (limited) return limited;

      // Path parameters arrive decoded once by the router: decoding them again would make `release%2F1` (a name
      // of its own) mean `release/1`, and leave names with a bare `%` unreachable.
      const decoded: Record<string, string> = rawParams ?? {};
      // The same validation as an in-process call (core/call.ts), with the body read in between: a bad query
      // string is told before anything about the body.
      const location = atEdge(() => parsePathAndQuery(op, decoded, queryObject(request.url, op)));
      if (!location.ok) return location.response;
      const body = await readBody(request, op, maxBytes);
      if (!body.ok) return body.response;
      const bodyValue = atEdge(() => parseBody(op, body.value));
      if (!bodyValue.ok) return bodyValue.response;
      const ctx: OpContext = { core: opts.core, principal, publicUrl: () => publicBaseUrl(opts.core.config, request), signal: request.signal };
      const ifMatch = op.headers ? request.headers.get("if-match") : null;
      if (ifMatch !== null) ctx.ifMatch = ifMatch;
      const input: OpInput = { ...location.value, body: bodyValue.value };
      // A long-poll's answer depends on when it was asked, not only on the database: never kept.
      const longPoll = ((input.query as { wait?: unknown } | undefined)?.wait ?? 0) !== 0;
      const cacheKey = cacheable && !longPoll ? ResponseCache.key(principal.workspaceId, request.url) : null;
      const version = cacheKey ? opts.responses.version() : "";
      // An operation that may stream, asked for a stream: its events as they come, then its answer (event-stream.ts).
      if (op.stream && wantsEventStream(request)) {
        const abort = new AbortController();
        ctx.signal = AbortSignal.any([request.signal, abort.signal]);
        const declared = op.stream.events;
        const emit = (send: (event: string, data: unknown) => void) => (event: string, data: unknown) => {
          const schema = declared[event];
          if (!schema) throw new Error(`${op.name} emitted the event "${event}", which the manifest does not declare`);
          if (opts.validateResponses) checkAnswer(op.name, `event ${event}`, schema, data);
          send(event, data);
        };
        return await withIdempotency(ctx, op, request, input.params as Record<string, unknown>, () =>
          eventStreamAnswer({
            status: op.successStatus,
            abort,
            run: async (send) => {
              ctx.emit = emit(send);
              const result = await handler(ctx, input);
              if (opts.validateResponses) checkAnswer(op.name, "response", op.response as z.ZodType, result);
              return result;
            },
            errorBody: (e) => responseForError(e, requestId).json(),
          }),
        );
      }
      // Every params schema is an object of path parameters.
      return await withIdempotency(ctx, op, request, input.params as Record<string, unknown>, async () => {
        const result = await handler(ctx, input);
        // A key revoked (or a member removed) while the read waited gets no answer: a key stops working at once.
        if (longPoll) {
          const still = await authenticate(opts.core, request, opts.sessions);
          if (still === null || still === "csrf_failed") {
            return errorResponse("unauthorized", UNAUTHORIZED_MESSAGE, { headers: { "www-authenticate": 'Bearer realm="svc"' } });
          }
        }
        if (op.response === null) return new Response(null, { status: 204 });
        if ("raw" in op.response) return rawResponse(op.successStatus, result as RawBody);
        if (opts.validateResponses) checkAnswer(op.name, "response", op.response as z.ZodType, result);
        const etag = op.versioned ? tagOfAnswer(result) : null;
        const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8", ...(etag ? { etag } : {}) };
        if (cacheKey && !ctx.uncacheable) {
          const body = JSON.stringify(result);
          opts.responses.set(cacheKey, { version, status: op.successStatus, body, operation: op.name, etag });
          return new Response(body, { status: op.successStatus, headers });
        }
        return new Response(JSON.stringify(result), { status: op.successStatus, headers });
      });
    } catch (e) {
      return responseForError(e, requestId);
    }
  };
}

/** Mounts every operation on the app under /api/v1/ops. */
export function mountOperations<A extends Elysia>(app: A, operations: Operation[], opts: MountOptions): A {
  for (const op of operations) {
    const serve = operationHandler(op, opts);
    app.route(op.method, API_PREFIX + toElysiaPath(op.path), ({ request, params }) => serve(request, params as Record<string, string>), {
      parse: "none",
    });
  }
  return app;
}
