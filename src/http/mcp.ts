// MCP over streamable HTTP at /mcp: the tools, resources and prompts of `svc mcp`, executed in-process through
// the core with the API key's principal and counted against the workspace's request budget. Stateless: every
// POST is answered on its own (no session to keep, so any instance behind a load balancer can answer).
// Without a key: 401 pointing at the protected-resource metadata. A browser Origin other than the server's own
// is refused (DNS rebinding). `?toolsets=` and `?read_only=` narrow the tools as `svc mcp`'s flags do.
import type { Config } from "../../config/schema";
import { callOperation } from "../core/call";
import type { Core, Principal } from "../core/context";
import type { RawBody } from "../core/handler";
import type { OperationKey } from "../core/registry";
import { keyOfOperation, type Operation } from "../manifest";
import { AppError, UNAUTHORIZED_MESSAGE } from "../manifest/errors";
import type { RequestBudget } from "../security/token-bucket";
import { splitInput } from "../client/schema-fields";
import { ClientError } from "../client/errors";
import { bearerToken } from "./auth";
import { errorResponse, responseForError } from "./errors";
import { publicBaseUrl } from "./public-url";
import { requestState } from "./request-state";

export const MCP_PATH = "/mcp";
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

export interface McpRouteOptions {
  core: Core;
  workspaceBuckets: RequestBudget | null;
}

/** The query parameters /mcp takes (docs/mcp.md). */
const MCP_QUERY = ["toolsets", "read_only"];

/** Whether this path is served here. */
export function isMcpPath(pathname: string): boolean {
  return pathname === MCP_PATH || pathname === RESOURCE_METADATA_PATH || pathname === `${RESOURCE_METADATA_PATH}${MCP_PATH}`;
}

function metadata(config: Config, request: Request): Response {
  const base = publicBaseUrl(config, request);
  return Response.json(
    {
      resource: `${base}${MCP_PATH}`,
      resource_name: "svc",
      authorization_servers: [],
      bearer_methods_supported: ["header"],
    },
    { headers: { "cache-control": "max-age=3600" } },
  );
}

async function bytesOf(body: RawBody["body"]): Promise<Uint8Array> {
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  return new Uint8Array(await body.arrayBuffer());
}

/** What a refusal or failure of the core looks like to a tool: the same code, message and details as over REST. */
async function asClientError(e: unknown, requestId: string): Promise<ClientError> {
  if (e instanceof ClientError) return e;
  if (e instanceof AppError) return new ClientError(e.status, e.code, e.message, e.details);
  const res = responseForError(e, requestId);
  const body = (await res.json()) as { error: string; message: string };
  const retry = res.headers.get("retry-after");
  return new ClientError(res.status, body.error, body.message, undefined, retry ? Number(retry) : undefined);
}

/**
 * Why a browser's request is refused (DNS rebinding: a page on another site reaching this server through the
 * browser), or null. Clients that are not browsers send no Origin. The one origin served is base_url's; without
 * base_url, the address the request came to, and only when that is an IP address or localhost (a host name
 * there could be an attacker's, rebound to this server).
 */
export function originRefusal(config: Config, origin: string | null, base: string): string | null {
  if (origin === null) return null;
  const own = new URL(base);
  const ok = origin === own.origin && (config.base_url !== undefined || /^(\d+\.\d+\.\d+\.\d+|\[[\da-f:.]+\]|localhost)$/i.test(own.hostname));
  if (ok) return null;
  return config.base_url
    ? `requests from the web page at ${origin} are refused: /mcp answers pages of ${own.origin} only, and clients that send no Origin`
    : `requests from the web page at ${origin} are refused: without base_url configured, /mcp answers only clients that send no Origin (or pages of this server reached by IP address)`;
}

export function createMcpRoute(opts: McpRouteOptions) {
  const { core, workspaceBuckets } = opts;
  const config = core.config;

  function executorFor(principal: Principal, request: Request, requestId: string) {
    const state = requestState(request);
    if (state) state.workspaceId = principal.workspaceId;
    return {
      async call(op: Operation, input: Record<string, unknown>, callOpts: { idempotencyKey?: string } = {}) {
        try {
          if (workspaceBuckets && !op.budgetExempt) {
            const verdict = await workspaceBuckets.take(principal.workspaceId);
            // The RateLimit headers speak for the workspace's budget the calls draw from, as over REST, not for
            // the address's (a client reading them would think it had thousands of calls left when it has none).
            if (state) state.rateLimit = verdict;
            if (!verdict.allowed) {
              throw new ClientError(
                429,
                "rate_limited",
                `the workspace's request budget (${verdict.limit}/h) is used up; retry after ${verdict.retryAfterSeconds} s`,
                undefined,
                verdict.retryAfterSeconds,
              );
            }
          }
          const key = keyOfOperation.get(op) as OperationKey | undefined;
          if (!key) throw new Error(`operation ${op.name} is not in the manifest`);
          const { params, query, body, headers } = splitInput(op, input);
          // The body REST would have received, held to the same limit: a 413 the model reads as a tool error, as over stdio.
          if (body !== undefined && Buffer.byteLength(JSON.stringify(body)) > config.max_body_bytes)
            throw new ClientError(413, "payload_too_large", `the request body is larger than ${config.max_body_bytes} bytes`);
          const out = await callOperation(
            core,
            principal,
            key,
            { params, query, body },
            {
              publicUrl: () => publicBaseUrl(config, request),
              idempotencyKey: callOpts.idempotencyKey,
              ifMatch: headers["if-match"],
            },
          );
          if (op.response === null) return { json: null, raw: null };
          if ("raw" in op.response) {
            const raw = out as RawBody;
            return { json: null, raw: { contentType: raw.contentType, bytes: await bytesOf(raw.body) } };
          }
          return { json: out, raw: null };
        } catch (e) {
          throw await asClientError(e, requestId);
        }
      },
    };
  }

  return async function handle(request: Request, pathname: string, requestId: string): Promise<Response> {
    if (pathname !== MCP_PATH) {
      if (request.method !== "GET" && request.method !== "HEAD")
        return errorResponse("method_not_allowed", `${request.method} is not allowed here; use GET`, { headers: { allow: "GET" } });
      return metadata(config, request);
    }
    const base = publicBaseUrl(config, request);
    const refusal = originRefusal(config, request.headers.get("origin"), base);
    if (refusal) return errorResponse("forbidden", refusal);
    const token = bearerToken(request);
    const key = token === null ? null : await core.keys.verify(token);
    if (!key) {
      return errorResponse("unauthorized", UNAUTHORIZED_MESSAGE, {
        headers: { "www-authenticate": `Bearer resource_metadata="${base}${RESOURCE_METADATA_PATH}"` },
      });
    }
    if (request.method !== "POST") {
      // Stateless: there is no session to stream to or to end.
      return errorResponse("method_not_allowed", `${request.method} is not allowed on /mcp (stateless streamable HTTP); use POST`, {
        headers: { allow: "POST" },
      });
    }
    const url = new URL(request.url);
    const { parseSelection, SelectionError } = await import("../../mcp/toolsets");
    let selection: ReturnType<typeof parseSelection>;
    try {
      // Only these two, once each: a misspelt `readonly` or a second `toolsets` silently ignored would give an
      // assistant more tools than its URL asks for.
      for (const name of new Set(url.searchParams.keys())) {
        if (!MCP_QUERY.includes(name)) throw new SelectionError(name, `unknown query parameter "${name}": /mcp takes ${MCP_QUERY.join(" and ")}`);
        if (url.searchParams.getAll(name).length > 1)
          throw new SelectionError(name, `"${name}" is given more than once: give it once (toolsets as one comma-separated list)`);
      }
      selection = parseSelection(url.searchParams.get("toolsets"), url.searchParams.get("read_only"));
    } catch (e) {
      if (!(e instanceof SelectionError)) throw e;
      return errorResponse("invalid_request", `the query string is not valid: ${e.message}`, { details: [{ path: `query.${e.field}`, message: e.message }] });
    }
    const principal: Principal = { userId: key.userId, workspaceId: key.workspaceId, role: key.role, via: "key", keyId: key.keyId, trigger: "mcp" };
    const [{ buildMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
      import("../../mcp/server"),
      import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    ]);
    const server = buildMcpServer({ executor: executorFor(principal, request, requestId), defaultProject: null, selection });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      // Room for the JSON-RPC envelope around a body at the API's limit (checked per call, as a tool error).
      maxRequestBodySize: config.max_body_bytes * 4,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      await server.close();
    }
  };
}
