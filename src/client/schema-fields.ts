// Reads the manifest's zod schemas as plain field lists: what goes in the path, the query and the body, and of what kind.
import { z } from "zod";
import type { Operation } from "../manifest/define";

export type FieldKind = "string" | "number" | "boolean" | "enum" | "string-list" | "string-map" | "json";

export interface FieldInfo {
  name: string;
  kind: FieldKind;
  required: boolean;
  nullable: boolean;
  description?: string;
  choices?: string[];
  schema: z.ZodType;
}

interface Unwrapped {
  inner: z.ZodType;
  optional: boolean;
  nullable: boolean;
  description?: string;
}

/** Peels optional, nullable, default and pipe wrappers, remembering what they said. */
export function unwrap(schema: z.ZodType): Unwrapped {
  let inner: z.ZodType = schema;
  let optional = false;
  let nullable = false;
  let description = schema.description;
  for (;;) {
    if (inner instanceof z.ZodOptional) {
      optional = true;
      inner = inner.unwrap() as z.ZodType;
    } else if (inner instanceof z.ZodDefault || inner instanceof z.ZodPrefault) {
      optional = true;
      inner = inner.def.innerType as z.ZodType;
    } else if (inner instanceof z.ZodNullable) {
      nullable = true;
      inner = inner.unwrap() as z.ZodType;
    } else if (inner instanceof z.ZodPipe) {
      inner = inner.def.in as z.ZodType;
    } else break;
    description ??= inner.description;
  }
  return { inner, optional, nullable, description };
}

/** The fields of an object schema (after unwrapping defaults); empty for anything else. */
export function objectShape(schema: z.ZodType | null): Record<string, z.ZodType> {
  if (!schema) return {};
  const { inner } = unwrap(schema);
  return inner instanceof z.ZodObject ? (inner.shape as Record<string, z.ZodType>) : {};
}

/** A string, also one of a format (an email address, a time, a URL: zod's string formats are not ZodString). */
const isText = (t: z.ZodType) => t instanceof z.ZodString || t instanceof z.ZodStringFormat;

function kindOf(inner: z.ZodType): Pick<FieldInfo, "kind" | "choices"> {
  if (isText(inner)) return { kind: "string" };
  if (inner instanceof z.ZodNumber) return { kind: "number" };
  if (inner instanceof z.ZodBoolean) return { kind: "boolean" };
  if (inner instanceof z.ZodEnum) return { kind: "enum", choices: inner.options.map(String) };
  if (inner instanceof z.ZodArray) {
    // A list of words or addresses is written `a,b` on a command line (the server checks each), not as JSON.
    const element = unwrap(inner.element as z.ZodType).inner;
    if (isText(element)) return { kind: "string-list" };
    if (element instanceof z.ZodEnum) return { kind: "string-list", choices: element.options.map(String) };
  }
  if (inner instanceof z.ZodRecord && unwrap(inner.valueType as z.ZodType).inner instanceof z.ZodString) return { kind: "string-map" };
  return { kind: "json" };
}

export function fieldsOf(schema: z.ZodType | null): FieldInfo[] {
  return Object.entries(objectShape(schema)).map(([name, s]) => {
    const u = unwrap(s);
    return { name, ...kindOf(u.inner), required: !u.optional, nullable: u.nullable, description: u.description, schema: s };
  });
}

export interface OperationFields {
  params: FieldInfo[];
  query: FieldInfo[];
  body: FieldInfo[];
  /** Request headers given as fields (`if_match` → If-Match). */
  headers: FieldInfo[];
}

export function operationFields(op: Operation): OperationFields {
  return { params: fieldsOf(op.params), query: fieldsOf(op.query), body: fieldsOf(op.body), headers: fieldsOf(op.headers) };
}

/** The HTTP header a header field is sent as: `if_match` → `if-match`. */
export const headerName = (field: string) => field.replace(/_/g, "-");

/** Splits one flat input object into path parameters, query and body, by the operation's schemas. */
export function splitInput(
  op: Operation,
  input: Record<string, unknown>,
): { params: Record<string, string>; query: Record<string, unknown>; body: Record<string, unknown> | undefined; headers: Record<string, string> } {
  const paramNames = Object.keys(objectShape(op.params));
  const queryNames = new Set(Object.keys(objectShape(op.query)));
  const headerNames = new Set(Object.keys(objectShape(op.headers)));
  const params: Record<string, string> = {};
  const query: Record<string, unknown> = {};
  const body: Record<string, unknown> = {};
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(input)) {
    if (v === undefined) continue;
    if (paramNames.includes(k)) params[k] = String(v);
    else if (queryNames.has(k)) query[k] = v;
    else if (headerNames.has(k)) headers[headerName(k)] = String(v);
    else body[k] = v;
  }
  return { params, query, body: op.body ? body : undefined, headers };
}
