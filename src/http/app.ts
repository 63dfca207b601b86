// The HTTP service: request ids, the per-IP limit before anything else, the operations mounted from the
// manifest, the OpenAPI document, JSON errors for unknown routes (404) and wrong methods (405), request logs.
import { Elysia } from "elysia";
import type { Core } from "../core/context";
import { handlerMap } from "../core/registry";
import { API_PREFIX, operations, ops } from "../manifest";
import { log, logEnabled } from "../logging";
import { newId } from "../security/ids";
import { type BucketVerdict, requestBudget } from "../security/token-bucket";
import { VERSION } from "../version";
import type { SessionResolver } from "./auth";
import { errorResponse, responseForError } from "./errors";
import { createMcpRoute, isMcpPath, MCP_PATH } from "./mcp";
import { mountOperations } from "./mount";
import { buildOpenApiDocument } from "./openapi";
import { bearerToken } from "./auth";
import { type RequestState, requestState, setRequestState } from "./request-state";
import { requestTarget } from "./request-target";
import { ResponseCache } from "./response-cache";

export interface AppOptions {
  core: Core;
  sessions?: SessionResolver;
  /** Extra routes (web application, install/download, health, metrics) added by their modules. */
  plugins?: ((app: Elysia) => Elysia)[];
  /** Observes each finished request (metrics). */
  onFinished?: (request: Request, response: Response, durationMs: number) => void;
  /**
   * Requests spared the per-IP budget once their own credential proves them: a runner's calls, which keep its runs'
   * leases (a CI behind the same address using up the budget must not end a healthy runner's runs).
   */
  ipBudgetExempt?: (request: Request, pathname: string) => boolean | Promise<boolean>;
}

export interface HttpService {
  fetch(request: Request, clientIp: string): Response | Promise<Response>;
  app: Elysia;
}

const methodMatchers = operations.map((op) => ({
  method: op.method,
  regex: new RegExp(`^${API_PREFIX}${op.path.replace(/\{\w+\}/g, "[^/]+")}/?$`),
}));

function allowedMethods(pathname: string): string[] {
  return [...new Set(methodMatchers.filter((m) => m.regex.test(pathname)).map((m) => m.method))];
}

/** How late a commit by another process may be noticed (see ChangeFeed.refreshExternalIfOlderThan). */
const EXTERNAL_CHANGES_MAX_AGE_MS = 1;

/** Request ids only need to be unique: a random per-process prefix and a counter. */
const requestIdPrefix = `req_${newId("req").slice(4, 12)}`;
let requestCounter = 0;
const nextRequestId = () => `${requestIdPrefix}${(++requestCounter).toString(36)}`;

/** The path of an absolute request URL, without parsing the whole URL. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q < 0 ? url.slice(start) : url.slice(start, q);
}

/** The headers every response carries: its request id and, when a limit applied, the rate-limit state. */
function finalHeaders(state: RequestState, headers: Record<string, string>, api: boolean): Record<string, string> {
  headers["x-request-id"] = state.id;
  if (api) {
    // API answers are private to their caller: no shared cache may keep them, and no browser may sniff them.
    headers["cache-control"] = "no-store";
    headers["x-content-type-options"] = "nosniff";
  }
  const v = state.rateLimit;
  if (v) {
    headers["ratelimit-limit"] = String(v.limit);
    headers["ratelimit-remaining"] = String(v.remaining);
    headers["ratelimit-reset"] = String(v.resetSeconds);
  }
  return headers;
}

export function createHttpService(opts: AppOptions): HttpService {
  const { core } = opts;
  const rl = core.config.rate_limit;
  // In memory on one SQLite node; in the database every node shares on PostgreSQL (the same verdicts either way).
  const ipBuckets = rl.enabled ? requestBudget("ip", rl.per_ip_per_hour, core.buckets) : null;
  const workspaceBuckets = rl.enabled ? requestBudget("workspace", rl.per_workspace_per_hour, core.buckets) : null;
  const responses = new ResponseCache(core.changes);
  // Built on first request: converting every schema takes ~50-100 ms, too much to add to every start.
  let openapi: string | undefined;

  const base = new Elysia()
    .onError(({ code, request }) => {
      const state = requestState(request);
      if (code === "NOT_FOUND") {
        const allow = allowedMethods(new URL(request.url).pathname);
        if (allow.length > 0) {
          return errorResponse("method_not_allowed", `${request.method} is not allowed here; use ${allow.join(", ")}`, {
            headers: { allow: allow.join(", ") },
          });
        }
        return errorResponse("not_found", `no route ${request.method} ${new URL(request.url).pathname}`);
      }
      if (code === "PARSE") return errorResponse("invalid_request", "the request body could not be parsed");
      return errorResponse("internal_error", `internal error; quote request id ${state?.id ?? "?"}`, { requestId: state?.id });
    })
    .get("/api/v1/openapi.json", () => {
      openapi ??= JSON.stringify(buildOpenApiDocument(VERSION, { serverUrl: core.config.base_url, rateLimits: rl.enabled }));
      return new Response(openapi, { headers: { "content-type": "application/json; charset=utf-8" } });
    });
  // Routes are added by mutation below; the plain type keeps plugins simple to write.
  let app = base as unknown as Elysia;

  app = mountOperations(app, operations, {
    core,
    handlers: handlerMap(ops),
    workspaceBuckets,
    sessions: opts.sessions,
    responses,
    validateResponses: process.env.NODE_ENV === "test" || process.env.SVC_VALIDATE_RESPONSES === "1",
  });
  for (const plugin of opts.plugins ?? []) app = plugin(app);
  const mcp = createMcpRoute({ core, workspaceBuckets });

  /** A cached read is answered synchronously; everything else goes through the router. */
  function serve(request: Request, state: RequestState, pathname: string): Response | Promise<Response> {
    if (isMcpPath(pathname)) return mcp(request, pathname, state.id);
    if (request.method === "GET" && request.url.includes(API_PREFIX)) {
      const cached = cachedRead(request, state);
      if (cached instanceof Promise) return cached.then((r) => r ?? app.handle(request));
      if (cached) return cached;
    }
    return app.handle(request);
  }

  /**
   * A cached read for a valid key: answered without routing, validation or the handler. A budget refusal is left
   * to the route, which refuses it with the 429 every refusal gets.
   */
  function cachedRead(request: Request, state: RequestState): Response | null | Promise<Response | null> {
    const token = bearerToken(request);
    if (token === null) return null;
    const key = core.keys.verifyCached(token);
    if (!key) return null;
    const hit = responses.get(ResponseCache.key(key.workspaceId, request.url));
    if (!hit) return null;
    state.operation = hit.operation;
    state.workspaceId = key.workspaceId;
    if (!workspaceBuckets) return cachedAnswer(state, hit);
    const verdict = workspaceBuckets.take(key.workspaceId);
    const answer = (v: BucketVerdict) => {
      state.rateLimit = v;
      return v.allowed ? cachedAnswer(state, hit) : null;
    };
    return verdict instanceof Promise ? verdict.then(answer) : answer(verdict);
  }

  function cachedAnswer(state: RequestState, hit: NonNullable<ReturnType<ResponseCache["get"]>>): Response {
    // All headers at once: setting them one by one on the finished response costs more than the rest of a hit.
    state.headersSet = true;
    return new Response(hit.body, {
      status: hit.status,
      headers: finalHeaders(state, { "content-type": "application/json; charset=utf-8", ...(hit.etag ? { etag: hit.etag } : {}) }, true),
    });
  }

  function fetch(incoming: Request, clientIp: string): Response | Promise<Response> {
    const state: RequestState = { id: nextRequestId(), ip: clientIp, startedAt: performance.now(), rateLimit: null };
    const { request, refusal } = requestTarget(incoming, core.config);
    setRequestState(request, state);
    const pathname = pathOf(request.url);
    if (refusal) return finish(request, state, pathname, refusal);
    core.changes.refreshExternalIfOlderThan(EXTERNAL_CHANGES_MAX_AGE_MS);
    let answer: Response | Promise<Response>;
    if (ipBuckets && (pathname.startsWith("/api/") || pathname === MCP_PATH)) {
      // Before the key is even parsed, so floods of invalid keys cannot probe or overload the API.
      const buckets = ipBuckets;
      const exempt = opts.ipBudgetExempt?.(request, pathname) ?? false;
      if (exempt instanceof Promise) answer = exempt.then((yes) => (yes ? serve(request, state, pathname) : ipChecked(buckets.take(clientIp))));
      else answer = exempt ? serve(request, state, pathname) : ipChecked(buckets.take(clientIp));
    } else {
      answer = serve(request, state, pathname);
    }
    // No await on the cached path: a hit is finished in the same tick.
    // A failure outside the operations' own handling still gets the JSON error shape, never a plain-text 500.
    return answer instanceof Promise
      ? answer.then(
          (r) => finish(request, state, pathname, r),
          (e) => finish(request, state, pathname, responseForError(e, state.id)),
        )
      : finish(request, state, pathname, answer);

    function ipChecked(verdict: BucketVerdict | Promise<BucketVerdict>): Response | Promise<Response> {
      const afterIpCheck = (v: BucketVerdict) => {
        state.rateLimit = v;
        return v.allowed
          ? serve(request, state, pathname)
          : errorResponse("rate_limited", `too many requests from this address (${v.limit}/h); retry after ${v.retryAfterSeconds} s`, {
              headers: { "retry-after": String(v.retryAfterSeconds) },
            });
      };
      return verdict instanceof Promise ? verdict.then(afterIpCheck) : afterIpCheck(verdict);
    }
  }

  function finish(request: Request, state: RequestState, pathname: string, response: Response): Response {
    if (!state.headersSet) {
      const h = response.headers;
      // An event stream says its own Cache-Control (src/http/event-stream.ts).
      const own = h.has("cache-control");
      for (const [name, value] of Object.entries(finalHeaders(state, {}, pathname.startsWith("/api/") || pathname === MCP_PATH))) {
        if (!(own && name === "cache-control")) h.set(name, value);
      }
    }
    const duration = performance.now() - state.startedAt;
    opts.onFinished?.(request, response, duration);
    if (logEnabled("info"))
      log.info("request", {
        request_id: state.id,
        method: request.method,
        path: pathname,
        status: response.status,
        duration_ms: Math.round(duration * 100) / 100,
        ip: state.ip,
        operation: state.operation,
      });
    return response;
  }

  return { fetch, app };
}
