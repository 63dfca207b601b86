// The OpenAPI 3.1 document, generated from the manifest: absolute paths, operationId = operation name,
// bearer security, the error schema. Named zod schemas become components; their $defs are hoisted there.
import { z } from "zod";
import { API_PREFIX, operations } from "../manifest";
import type { Operation } from "../manifest/define";
import { ERROR_TABLE, ErrorBody } from "../manifest/errors";
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
    for (const [name, def] of Object.entries(defs)) {
      const existing = this.schemas[name];
      let target = name;
      if (existing && JSON.stringify(existing) !== JSON.stringify(def)) target = `${name}Input`;
      renames[name] = target;
    }
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
    params.push({ name, in: "query", required: querySchema.required?.includes(name) ?? false, schema: s, ...(description ? { description } : {}) });
  }
  if (op.startsWork) {
    params.push({
      name: "Idempotency-Key", in: "header", required: false, schema: { type: "string", maxLength: 255 },
      description: "The same key within 24 h returns the first response instead of starting the work again",
    });
  }
  return params;
}

const errorRef = { $ref: "#/components/schemas/Error" };

function responsesOf(op: Operation, c: ComponentCollector): Json {
  const responses: Json = {};
  if (op.response === null) responses["204"] = { description: "Done" };
  else if ("raw" in op.response) {
    responses[String(op.successStatus)] = { description: op.response.description, content: { [op.response.contentType]: { schema: { type: "string", format: "binary" } } } };
  } else {
    responses[String(op.successStatus)] = { description: "Success", content: { "application/json": { schema: c.convert(op.response, "output") } } };
  }
  const codes = new Set<keyof typeof ERROR_TABLE>(["unauthorized", "rate_limited", "internal_error", ...op.errors]);
  if (op.body || Object.keys((op.query as z.ZodObject).shape ?? {}).length > 0) codes.add("invalid_request");
  if (op.body) {
    codes.add("payload_too_large");
    codes.add("unsupported_media_type");
  }
  for (const code of codes) {
    responses[String(ERROR_TABLE[code].status)] = { description: code, content: { "application/json": { schema: errorRef } } };
  }
  return responses;
}

export function buildOpenApiDocument(version: string, serverUrl?: string): Json {
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
      responses: responsesOf(op, c),
      // A session-only operation is the web application's: no key, so no CLI command or MCP tool either.
      security: op.sessionOnly ? [{ webSession: [] }] : [{ bearerAuth: [] }],
      ...(op.sessionOnly ? {} : { "x-svc-cli": `svc ${op.cli.words.join(" ")}${(op.cli.args ?? []).map((a) => ` <${a}>`).join("")}` }),
      "x-svc-hints": op.hints,
    };
    if (op.body) {
      entry.requestBody = { required: !(op.body as z.ZodType).safeParse(undefined).success, content: { "application/json": { schema: c.convert(op.body, "input") } } };
    }
    (paths[path] as Json)[op.method.toLowerCase()] = entry;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "svc operations API",
      version,
      description: "Test management and test automation. Every operation callable with an API key is also a CLI command and an MCP tool of the same name.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      schemas: c.schemas,
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
