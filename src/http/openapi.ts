// The OpenAPI 3.1 document, generated from the manifest: absolute paths, operationId = operation name,
// bearer security, the error schema. Named zod schemas become components; their $defs are hoisted there.
import { z } from "zod";
import { API_PREFIX, operations } from "../manifest";
import type { Operation, StreamSpec } from "../manifest/define";
import { ERROR_TABLE, ErrorBody, type ErrorCode } from "../manifest/errors";
import { SESSION_COOKIE } from "./web/cookies";

type Json = Record<string, unknown>;

class ComponentCollector {
  readonly schemas: Record<string, Json> = {};

  /** Converts a schema, moving its $defs into components and pointing $refs there. */
  convert(schema: z.ZodType, io: "input" | "output"): Json {
    const out = z.toJSONSchema(schema, { io, unrepresentable: "any", reused: "inline", target: "draft-2020-12" }) as Json;
    delete out.$schema;
    const defs = (out.$defs ?? {}) as Record<string, Json>;
    delete out.$defs;
    const renames: Record<string, string> = {};
    for (const name of Object.keys(defs)) renames[name] = name;
    const rewrite = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(rewrite);
      if (v && typeof v === "object") {
        const o: Json = {};
        for (const [k, x] of Object.entries(v)) {
          if (k === "$ref" && typeof x === "string" && x.startsWith("#/$defs/")) {
            const n = x.slice("#/$defs/".length);
            o[k] = `#/components/schemas/${renames[n] ?? n}`;
          } else o[k] = rewrite(x);
        }
        return o;
      }
      return v;
    };
    // A def keeps its name when, with its $refs pointing into components, it is the schema already there; else it
    // is the other side (the input) of that schema. Compared as written into components, since a raw def's $refs
    // always differ; and again until no name moves, since a def whose $ref moved to an input is an input too.
    let moved = true;
    while (moved) {
      moved = false;
      for (const [name, def] of Object.entries(defs)) {
        const existing = this.schemas[name];
        if (renames[name] !== name || !existing) continue;
        if (JSON.stringify(existing) !== JSON.stringify(rewrite(stripId(def)))) {
          renames[name] = `${name}Input`;
          moved = true;
        }
      }
    }
    for (const [name, def] of Object.entries(defs)) {
      const target = renames[name] ?? name;
      this.schemas[target] ??= rewrite(stripId(def)) as Json;
    }
    return rewrite(stripId(out)) as Json;
  }
}

/** zod writes a schema's meta id as "id"; OpenAPI has no such keyword. */
function stripId(s: Json): Json {
  const { id: _id, ...rest } = s;
  return rest;
}

function parametersOf(op: Operation, c: ComponentCollector) {
  const params: Json[] = [];
  const pathSchema = c.convert(op.params, "input") as { properties?: Record<string, Json> };
  for (const [name, schema] of Object.entries(pathSchema.properties ?? {})) {
    const { description, ...s } = schema;
    params.push({ name, in: "path", required: true, schema: s, ...(description ? { description } : {}) });
  }
  const querySchema = c.convert(op.query, "input") as { properties?: Record<string, Json>; required?: string[] };
  for (const [name, schema] of Object.entries(querySchema.properties ?? {})) {
    const { description, ...s } = schema;
    // A map (`metadata`) is sent as metadata[KEY]=VALUE: without a style, OpenAPI's default (form) would spread its
    // keys into parameters of their own (`?branch=main`), which the server refuses as unknown.
    const map = s.type === "object" ? { style: "deepObject", explode: true } : {};
    params.push({
      name,
      in: "query",
      required: querySchema.required?.includes(name) ?? false,
      ...map,
      schema: s,
      ...(description ? { description } : {}),
    });
  }
  if (op.startsWork) params.push({ $ref: "#/components/parameters/IdempotencyKey" });
  if (op.headers && "if_match" in op.headers.shape) params.push({ $ref: "#/components/parameters/IfMatch" });
  return params;
}

const errorRef = { $ref: "#/components/schemas/Error" };
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Headers on every response of the API; the RateLimit-* ones only while rate limits are on. */
function commonHeaders(rateLimits: boolean): Json {
  return {
    "X-Request-Id": headerRef("X-Request-Id"),
    ...(rateLimits
      ? {
          "RateLimit-Limit": headerRef("RateLimit-Limit"),
          "RateLimit-Remaining": headerRef("RateLimit-Remaining"),
          "RateLimit-Reset": headerRef("RateLimit-Reset"),
        }
      : {}),
  };
}

/**
 * Every error code an operation can answer: the ones its handler declares, plus those the pipeline in front of
 * every handler sends (see src/http/mount.ts and src/http/app.ts).
 */
export function answerableErrors(op: Operation, rateLimits: boolean): ErrorCode[] {
  // 400: a malformed Host header is refused before routing; 413: every request's body is read within the limit;
  // 503: the database is busy or its disk full.
  const codes = new Set<ErrorCode>(["invalid_request", "unauthorized", "payload_too_large", "internal_error", "unavailable", ...op.errors]);
  if (rateLimits) codes.add("rate_limited");
  // A state change from a web session without its CSRF token, or a key calling a session-only operation.
  if (op.method !== "GET" || op.sessionOnly) codes.add("forbidden");
  // A path parameter that is not a valid id is simply not found.
  if (op.path.includes("{")) codes.add("not_found");
  if (op.body) codes.add("unsupported_media_type");
  return [...codes].sort((a, b) => ERROR_TABLE[a].status - ERROR_TABLE[b].status);
}

/**
 * An operation's server-sent event stream: `event: NAME` and `data: JSON` lines. OpenAPI 3.1 has no schema for
 * the items of a stream, so each event's data schema is listed under x-svc-events (with done and error).
 */
function eventStreamOf(stream: StreamSpec, response: Json, c: ComponentCollector): Json {
  const events: Json = {};
  for (const [name, schema] of Object.entries(stream.events)) events[name] = c.convert(schema, "output");
  events.done = response;
  events.error = errorRef;
  return {
    schema: { type: "string", description: `${stream.description} On a failure after the stream began: error, in the error shape; the stream then ends.` },
    "x-svc-events": events,
  };
}

function responsesOf(op: Operation, c: ComponentCollector, rateLimits: boolean): Json {
  const responses: Json = {};
  const headers = commonHeaders(rateLimits);
  const successHeaders = op.startsWork
    ? { ...headers, "Idempotent-Replayed": headerRef("Idempotent-Replayed") }
    : op.versioned && op.response !== null
      ? { ...headers, ETag: headerRef("ETag") }
      : headers;
  if (op.response === null) responses["204"] = { description: "Done", headers: successHeaders };
  else if ("raw" in op.response) {
    responses[String(op.successStatus)] = {
      description: op.response.description,
      headers: successHeaders,
      content: { [op.response.contentType]: { schema: { type: "string", format: "binary" } } },
    };
  } else {
    const schema = c.convert(op.response, "output");
    responses[String(op.successStatus)] = {
      description: op.stream ? "Success: the JSON answer, or with Accept: text/event-stream the event stream" : "Success",
      headers: successHeaders,
      content: {
        "application/json": { schema },
        ...(op.stream ? { "text/event-stream": eventStreamOf(op.stream, schema, c) } : {}),
      },
    };
  }
  for (const code of answerableErrors(op, rateLimits)) {
    const retry = code === "rate_limited" || code === "unavailable";
    responses[String(ERROR_TABLE[code].status)] = {
      description: code,
      headers: retry ? { ...headers, "Retry-After": headerRef("Retry-After") } : headers,
      content: { "application/json": { schema: errorRef } },
    };
  }
  return responses;
}

const integerHeader = (description: string) => ({ description, schema: { type: "integer", minimum: 0 } });

const HEADERS: Json = {
  "X-Request-Id": { description: "This request's id, also in the server log (and in an error body as request_id)", schema: { type: "string" } },
  "RateLimit-Limit": integerHeader("Requests per hour of the bucket that applied (per IP, or per workspace)"),
  "RateLimit-Remaining": integerHeader("Requests left in that bucket"),
  "RateLimit-Reset": integerHeader("Seconds until the bucket is full again"),
  "Retry-After": integerHeader("Seconds to wait before retrying"),
  "Idempotent-Replayed": {
    description: "true when this is the stored answer to an earlier request with the same Idempotency-Key",
    schema: { type: "string", enum: ["true"] },
  },
  Allow: { description: "The methods this path accepts", schema: { type: "string" } },
  ETag: {
    description: "The version of the record answered; send it back as If-Match with a PATCH or DELETE so a change made meanwhile is not overwritten",
    schema: { type: "string" },
  },
};

export interface OpenApiOptions {
  serverUrl?: string;
  /** Whether rate limits are on: then every response may carry RateLimit-* headers and every operation a 429. */
  rateLimits?: boolean;
}

export function buildOpenApiDocument(version: string, options: OpenApiOptions = {}): Json {
  const { serverUrl, rateLimits = true } = options;
  const c = new ComponentCollector();
  c.convert(ErrorBody, "output"); // registers components.schemas.Error
  const paths: Record<string, Json> = {};
  for (const op of operations) {
    const path = API_PREFIX + op.path;
    paths[path] ??= {};
    const entry: Json = {
      operationId: op.name,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.cli.words[0]],
      parameters: parametersOf(op, c),
      responses: responsesOf(op, c, rateLimits),
      // A session-only operation is the web application's: no key, so no CLI command or MCP tool either.
      security: op.sessionOnly ? [{ webSession: [] }] : [{ bearerAuth: [] }],
      ...(op.sessionOnly ? {} : { "x-svc-cli": `svc ${op.cli.words.join(" ")}${(op.cli.args ?? []).map((a) => ` <${a}>`).join("")}` }),
      "x-svc-hints": op.hints,
    };
    if (op.body) {
      entry.requestBody = {
        required: !(op.body as z.ZodType).safeParse(undefined).success,
        content: { "application/json": { schema: c.convert(op.body, "input") } },
      };
    }
    (paths[path] as Json)[op.method.toLowerCase()] = entry;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "svc operations API",
      version,
      description:
        "Test management and test automation. Every operation callable with an API key is also a CLI command and an MCP tool of the same name. " +
        "A method that a path does not list is answered 405 method_not_allowed with an Allow header (components.responses.MethodNotAllowed). " +
        "The web application's own routes under /api/v1/web (sign-in, setup, session, workspace) are described in docs/operations.md.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      schemas: c.schemas,
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          schema: { type: "string", minLength: 1, maxLength: 255 },
          description: "The same key within 24 h returns the first response instead of starting the work again",
        },
        IfMatch: {
          name: "If-Match",
          in: "header",
          required: false,
          schema: { type: "string", minLength: 1, maxLength: 1000 },
          description:
            "The ETag of the version the change is made from (or *, or a list): when the record has changed since, the change is refused with 412 precondition_failed and nothing changes. Without it, the change is made as ever.",
        },
      },
      headers: HEADERS,
      responses: {
        MethodNotAllowed: {
          description: "method_not_allowed: the path exists, the method does not",
          headers: { ...commonHeaders(rateLimits), Allow: headerRef("Allow") },
          content: { "application/json": { schema: errorRef } },
        },
      },
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "An API key: svc_ followed by 43 base62 characters" },
        webSession: {
          type: "apiKey",
          in: "cookie",
          name: SESSION_COOKIE,
          description: "A signed-in person's web session (POST /api/v1/web/login); requests that change something also send its X-CSRF-Token header",
        },
      },
    },
    security: [{ bearerAuth: [] }],
  };
}
