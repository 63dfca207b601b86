// Reads the project's OpenAPI document: the operations a feature covers (its tags or path prefixes), with their
// parameters, JSON request body, documented responses and security. Only the parts of the operations read are
// expanded ($refs followed), each within a node budget.
import { expansionProblem } from "../../core/projects/openapi-expansion";
import { GenerationFailure } from "../types";
import { RefExpander } from "./expand";

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;

export interface ApiParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: unknown;
  example: unknown;
  /** How the value is serialized (OpenAPI's `style`, `explode`): as written, or undefined for the location's default. */
  style?: string;
  explode?: boolean;
}

export interface ApiOperation {
  method: string;
  path: string;
  id: string;
  tags: string[];
  parameters: ApiParameter[];
  /** The JSON request body's schema and example, when the operation takes one. */
  body: { required: boolean; schema: unknown; example: unknown } | null;
  /** A request body the generated tests do not send (no JSON media type): its media type, and whether it is required. */
  otherBody: { mediaType: string; required: boolean } | null;
  /** Documented status codes (as written: "200", "404", "2XX", "default"). */
  statuses: string[];
  /** The JSON schema of each documented response that has one. */
  responseSchemas: Map<string, unknown>;
  /** The media types each documented response is written in, as listed. */
  responseTypes: Map<string, string[]>;
  /** Security requirements in force (the operation's own, else the document's); [] means none. */
  security: Obj[];
  /** The parts whose expansion ran past the node budget, so are incomplete: "body", "response 200", … */
  cut: string[];
}

/** The document with the means to follow its $refs. */
export interface OpenApiDocument {
  doc: Obj;
  refs: RefExpander;
}

/** An operation as listed, before any of its parts are expanded. */
export interface OperationEntry {
  method: string;
  path: string;
  id: string;
  tags: string[];
  item: Obj;
  operation: Obj;
}

function jsonMedia(content: unknown, refs: RefExpander): Obj | null {
  if (!isObject(content)) return null;
  const key = Object.keys(content).find((k) => k === "application/json" || /\+json$|\/json;/.test(k));
  const media = key ? refs.deref(content[key]) : undefined;
  return isObject(media) ? media : null;
}

function mediaExample(media: Obj, refs: RefExpander): unknown {
  if (media.example !== undefined) return media.example;
  if (isObject(media.examples)) {
    const first = refs.deref(Object.values(media.examples)[0]);
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
  return {
    name: p.name,
    in: p.in as ApiParameter["in"],
    required: p.required === true || p.in === "path",
    schema: p.schema,
    example,
    ...(typeof p.style === "string" ? { style: p.style } : {}),
    ...(typeof p.explode === "boolean" ? { explode: p.explode } : {}),
  };
}

/**
 * The document, once checked against the bounds an upload is held to: a document stored before they existed may
 * break them, and is refused here rather than expanded. External `$ref`s are never followed.
 */
export async function readDocument(doc: Obj): Promise<OpenApiDocument> {
  const problem = expansionProblem(doc);
  if (problem) {
    const where = problem.path ? ` (at ${problem.path})` : "";
    throw new GenerationFailure(`the project's OpenAPI document could not be read: ${problem.message}${where}`);
  }
  return { doc, refs: new RefExpander(doc) };
}

/** Every operation of the document, cheaply: only what selects it (method, path, id, tags) is read. */
export function operationEntries({ doc, refs }: OpenApiDocument): OperationEntry[] {
  const out: OperationEntry[] = [];
  for (const [path, raw] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    const item = refs.deref(raw);
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = refs.deref(item[method]);
      if (!isObject(operation)) continue;
      out.push({
        method: method.toUpperCase(),
        path,
        item,
        operation,
        id: typeof operation.operationId === "string" ? operation.operationId : `${method.toUpperCase()} ${path}`,
        tags: Array.isArray(operation.tags) ? operation.tags.filter((t): t is string => typeof t === "string") : [],
      });
    }
  }
  return out;
}

/** One operation with its parameters, body and responses expanded, each part within the node budget. */
export function readOperation({ doc, refs }: OpenApiDocument, entry: OperationEntry): ApiOperation {
  const { item, operation: op } = entry;
  const cut: string[] = [];
  const expand = (value: unknown, part: string): unknown => {
    const e = refs.expand(value);
    if (e.cut) cut.push(part);
    return e.value;
  };
  const globalSecurity = Array.isArray(doc.security) ? doc.security.filter(isObject) : [];
  const shared = Array.isArray(item.parameters) ? item.parameters : [];
  const params = new Map<string, ApiParameter>();
  for (const p of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
    const raw = refs.deref(p);
    const parsed = parameterOf(isObject(raw) ? expand(raw, `parameter ${String(raw.name)}`) : raw);
    if (parsed) params.set(`${parsed.in}:${parsed.name}`, parsed);
  }
  const rb = refs.deref(op.requestBody);
  const media = isObject(rb) ? jsonMedia(rb.content, refs) : null;
  const otherType = !media && isObject(rb) && isObject(rb.content) ? Object.keys(rb.content)[0] : undefined;
  const responses = refs.deref(op.responses);
  const responseSchemas = new Map<string, unknown>();
  const responseTypes = new Map<string, string[]>();
  for (const [code, r] of Object.entries(isObject(responses) ? responses : {})) {
    const response = refs.deref(r);
    if (isObject(response) && isObject(response.content)) responseTypes.set(code, Object.keys(response.content));
    const m = isObject(response) ? jsonMedia(response.content, refs) : null;
    if (m?.schema !== undefined) responseSchemas.set(code, expand(m.schema, `response ${code}`));
  }
  return {
    method: entry.method,
    path: entry.path,
    id: entry.id,
    tags: entry.tags,
    parameters: [...params.values()],
    body: media
      ? { required: isObject(rb) && rb.required === true, schema: expand(media.schema, "body"), example: expand(mediaExample(media, refs), "body example") }
      : null,
    otherBody: otherType ? { mediaType: otherType, required: isObject(rb) && rb.required === true } : null,
    statuses: Object.keys(isObject(responses) ? responses : {}),
    responseSchemas,
    responseTypes,
    security: Array.isArray(op.security) ? op.security.filter(isObject) : globalSecurity,
    cut,
  };
}

/** Every operation, expanded: bounded by the document's own expansion bound. */
export function listOperations(document: OpenApiDocument): ApiOperation[] {
  return operationEntries(document).map((entry) => readOperation(document, entry));
}

/** The operations a feature covers: any of its tags, or a path under any of its path prefixes; all when it names none. */
export function coveredOperations<T extends { tags: string[]; path: string }>(all: T[], target: { tags: string[]; paths: string[] }): T[] {
  if (target.tags.length === 0 && target.paths.length === 0) return all;
  const prefixes = target.paths.map((p) => p.replace(/\/+$/, ""));
  return all.filter(
    (op) =>
      op.tags.some((t) => target.tags.includes(t)) ||
      prefixes.some((p) => op.path === p || op.path.startsWith(`${p}/`) || (p === "" && op.path.startsWith("/"))),
  );
}
