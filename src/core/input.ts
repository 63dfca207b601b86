// An operation's input checked with its schemas in the manifest, as every surface checks it: REST at the edge,
// in-process calls (svc admin, MCP over HTTP, the fast tests), and the assistant before it holds an action. The same
// codes, messages and `details` paths wherever the input comes from.
import { z } from "zod";
import { objectShape, unwrap } from "../client/schema-fields";
import type { Operation } from "../manifest/define";
import { AppError, invalid, zodDetails } from "../manifest/errors";
import type { OpInput } from "./handler";

/**
 * Where the input has a key named `__proto__` (as JSON and query strings can carry), or null. Schemas drop such a
 * key without a word (a `metadata.__proto__` filter matched every run), so it is refused like any other bad key.
 */
function protoKeyAt(value: unknown, path: string, depth = 0): string | null {
  if (typeof value !== "object" || value === null || depth > 100) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = protoKeyAt(value[i], `${path}.${i}`, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  if (Object.hasOwn(value, "__proto__")) return `${path}.__proto__`;
  for (const [k, v] of Object.entries(value)) {
    const found = protoKeyAt(v, `${path}.${k}`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

function refuseProtoKey(value: unknown, where: "query" | "body"): void {
  const at = protoKeyAt(value, where);
  if (at !== null)
    throw invalid(`the ${where === "query" ? "query string" : "request body"} is not valid: ${at}: "__proto__" is not a usable key`, [
      { path: at, message: '"__proto__" is not a usable key' },
    ]);
}

/**
 * A query parameter the operation does not take is refused, not ignored: a misspelt filter (`?statuss=failed`,
 * `?status=failed` where there is no such filter) would otherwise answer the unfiltered list as if it were the
 * filtered one.
 */
function refuseUnknownParameters(op: Operation, query: unknown): void {
  if (typeof query !== "object" || query === null) return;
  const shape = (op.query as { shape?: Record<string, unknown> }).shape;
  if (!shape) return;
  const unknown = Object.keys(query).filter((k) => !Object.hasOwn(shape, k));
  if (unknown.length === 0) return;
  const known = Object.keys(shape);
  const names = unknown.map((k) => `"${k}"`).join(", ");
  throw invalid(
    `the query string is not valid: unknown parameter${unknown.length === 1 ? "" : "s"} ${names}: ${known.length > 0 ? `expected one of ${known.join(", ")}` : `${op.name} takes none`}`,
    unknown.map((k) => ({ path: `query.${k}`, message: "unknown parameter" })),
  );
}

/** The query fields of an operation whose schema coerces a text to a number (limit, wait, days), by operation. */
const numberFields = new WeakMap<Operation, string[]>();

function numberFieldsOf(op: Operation): string[] {
  let found = numberFields.get(op);
  if (!found) {
    found = Object.entries(objectShape(op.query))
      .filter(([, schema]) => {
        const { inner } = unwrap(schema);
        return inner instanceof z.ZodNumber && (inner.def as { coerce?: boolean }).coerce === true;
      })
      .map(([name]) => name);
    numberFields.set(op, found);
  }
  return found;
}

/** A number in a query string is written in digits: not as "" (no value), "1e1", "0x5", " 5" or "Infinity", which the coercion would take. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

function refuseNumbersNotInDigits(op: Operation, query: unknown): void {
  if (typeof query !== "object" || query === null) return;
  const bad = numberFieldsOf(op).filter((k) => {
    const v = (query as Record<string, unknown>)[k];
    return typeof v === "string" && !DECIMAL.test(v);
  });
  if (bad.length > 0)
    throw invalid(
      "the query string is not valid",
      bad.map((k) => ({ path: `query.${k}`, message: "expected a number" })),
    );
}

/** Query fields, parsed with the operation's query schema; a 400 names each field. */
export function parseQuery(op: Operation, query: unknown): OpInput["query"] {
  refuseProtoKey(query, "query");
  refuseUnknownParameters(op, query);
  refuseNumbersNotInDigits(op, query);
  const q = op.query.safeParse(query);
  if (!q.success) throw invalid("the query string is not valid", zodDetails(q.error, "query"));
  return q.data;
}

/** Path parameters and query fields, parsed with the operation's schemas. A malformed path parameter names nothing: 404. */
export function parsePathAndQuery(op: Operation, params: unknown, query: unknown): Pick<OpInput, "params" | "query"> {
  const p = op.params.safeParse(params);
  if (!p.success) throw new AppError("not_found", "not found");
  return { params: p.data, query: parseQuery(op, query) };
}

/** The body parsed with the operation's schema (undefined when the operation takes none); a 400 names each field. */
export function parseBody(op: Operation, body: unknown): unknown {
  if (!op.body) return undefined;
  refuseProtoKey(body, "body");
  const parsed = (op.body as z.ZodType).safeParse(body);
  if (parsed.success) return parsed.data;
  const details = zodDetails(parsed.error, "body");
  throw invalid(`the request body is not valid: ${details[0] ? `${details[0].path}: ${details[0].message}` : ""}`, details);
}
