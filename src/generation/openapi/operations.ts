// Reads the project's OpenAPI document: the operations a feature covers (its tags or path prefixes), with their
// parameters, JSON request body, documented responses and security.
import SwaggerParser from "@apidevtools/swagger-parser";
import { GenerationFailure } from "../types";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

export interface ApiParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: unknown;
  example: unknown;
}

export interface ApiOperation {
  method: string;
  path: string;
  id: string;
  tags: string[];
  parameters: ApiParameter[];
  /** The JSON request body's schema and example, when the operation takes one. */
  body: { required: boolean; schema: unknown; example: unknown } | null;
  /** Documented status codes (as written: "200", "404", "2XX", "default"). */
  statuses: string[];
  /** The JSON schema of each documented response that has one. */
  responseSchemas: Map<string, unknown>;
  /** Security requirements in force (the operation's own, else the document's); [] means none. */
  security: Obj[];
}

function jsonMedia(content: unknown): Obj | null {
  if (!isObject(content)) return null;
  const key = Object.keys(content).find((k) => k === "application/json" || /\+json$|\/json;/.test(k));
  const media = key ? content[key] : undefined;
  return isObject(media) ? media : null;
}

function mediaExample(media: Obj): unknown {
  if (media.example !== undefined) return media.example;
  if (isObject(media.examples)) {
    const first = Object.values(media.examples)[0];
    if (isObject(first) && first.value !== undefined) return first.value;
  }
  return undefined;
}

function parameterOf(p: unknown): ApiParameter | null {
  if (!isObject(p) || typeof p.name !== "string" || !["path", "query", "header", "cookie"].includes(String(p.in))) return null;
  let example = p.example;
  if (example === undefined && isObject(p.examples)) {
    const first = Object.values(p.examples)[0];
    if (isObject(first)) example = first.value;
  }
  return { name: p.name, in: p.in as ApiParameter["in"], required: p.required === true || p.in === "path", schema: p.schema, example };
}

/** Dereferences a copy of the document without following external references (the document is user input). */
export async function readDocument(doc: Obj): Promise<Obj> {
  try {
    return (await SwaggerParser.dereference(structuredClone(doc) as never, {
      resolve: { external: false },
      dereference: { circular: "ignore" },
    })) as unknown as Obj;
  } catch (e) {
    throw new GenerationFailure(`the project's OpenAPI document could not be read: ${(e as Error).message}`);
  }
}

export function listOperations(doc: Obj): ApiOperation[] {
  const out: ApiOperation[] = [];
  const globalSecurity = Array.isArray(doc.security) ? doc.security.filter(isObject) : [];
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const params = new Map<string, ApiParameter>();
      for (const p of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
        const parsed = parameterOf(p);
        if (parsed) params.set(`${parsed.in}:${parsed.name}`, parsed);
      }
      const rb = isObject(op.requestBody) ? op.requestBody : null;
      const media = rb ? jsonMedia(rb.content) : null;
      const responses = isObject(op.responses) ? op.responses : {};
      const responseSchemas = new Map<string, unknown>();
      for (const [code, r] of Object.entries(responses)) {
        const m = isObject(r) ? jsonMedia(r.content) : null;
        if (m?.schema !== undefined) responseSchemas.set(code, m.schema);
      }
      out.push({
        method: method.toUpperCase(), path,
        id: typeof op.operationId === "string" ? op.operationId : `${method.toUpperCase()} ${path}`,
        tags: Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === "string") : [],
        parameters: [...params.values()],
        body: media ? { required: rb?.required === true, schema: media.schema, example: mediaExample(media) } : null,
        statuses: Object.keys(responses),
        responseSchemas,
        security: Array.isArray(op.security) ? op.security.filter(isObject) : globalSecurity,
      });
    }
  }
  return out;
}

/** The operations a feature covers: any of its tags, or a path under any of its path prefixes; all when it names none. */
export function coveredOperations(all: ApiOperation[], target: { tags: string[]; paths: string[] }): ApiOperation[] {
  if (target.tags.length === 0 && target.paths.length === 0) return all;
  const prefixes = target.paths.map((p) => p.replace(/\/+$/, ""));
  return all.filter((op) =>
    op.tags.some((t) => target.tags.includes(t)) ||
    prefixes.some((p) => op.path === p || op.path.startsWith(`${p}/`) || (p === "" && op.path.startsWith("/"))),
  );
}
