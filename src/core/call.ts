// Calls a manifest operation in-process: the caller check and input validation the HTTP edge applies (the same
// codes and `details` paths), then the core handler, then the answer parsed with the operation's response schema.
// `svc admin` and the fast tests call operations this way, so a rule cannot differ by surface.
import type { z } from "zod";
import { ops, type Ops } from "../manifest";
import type { Operation, RawResponse } from "../manifest/define";
import { AppError, forbidden, invalid, zodDetails } from "../manifest/errors";
import { configuredAddress } from "./address";
import type { Core, IdempotentStart, OpContext, Principal } from "./context";
import type { OpInput, RawBody } from "./handler";
import { assertIdempotencyKey, findIdempotentAnswer, idempotencyScope } from "./idempotency";
import { registerInProcessCall } from "./in-process";
import { handlerMap, type OperationKey } from "./registry";

/** Input as a caller gives it, before validation: path parameters, query fields and the JSON body. */
export interface RawInput {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

/** What an operation answers once parsed with its response schema: the JSON value, raw bytes, or nothing. */
export type CallOutput<O> =
  O extends Operation<infer _P, infer _Q, infer _B, infer R> ? (R extends z.ZodType ? z.output<R> : R extends RawResponse ? RawBody : undefined) : never;

export interface CallOptions {
  /** The address people reach this server at, for links an operation hands out; by default the configured one. */
  publicUrl?: () => string;
  /** An Idempotency-Key for an operation that starts work: a key already answered gets that answer again. */
  idempotencyKey?: string;
  /** The If-Match of a change to a versioned record (PATCH or DELETE): a stale tag is 412 precondition_failed. */
  ifMatch?: string;
}

/** Refuses a caller the operation is not for: a session-only operation is never available to an API key. */
export function checkCaller(op: Operation, principal: Principal): void {
  if (op.sessionOnly && principal.via === "key") {
    throw forbidden(`${op.name} is only available to a signed-in user in the web application`);
  }
}

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

/** Path parameters and query fields, parsed with the operation's schemas. A malformed path parameter names nothing: 404. */
export function parsePathAndQuery(op: Operation, params: unknown, query: unknown): Pick<OpInput, "params" | "query"> {
  const p = op.params.safeParse(params);
  if (!p.success) throw new AppError("not_found", "not found");
  refuseProtoKey(query, "query");
  const q = op.query.safeParse(query);
  if (!q.success) throw invalid("the query string is not valid", zodDetails(q.error, "query"));
  return { params: p.data, query: q.data };
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

const handlers = handlerMap(ops);

/**
 * Calls the operation declared under `key` in the manifest as `principal`, with input validated exactly as over
 * HTTP. Refusals and rule violations are thrown as AppError, with the code and details the HTTP edge answers.
 */
export async function callOperation<K extends OperationKey>(
  core: Core,
  principal: Principal,
  key: K,
  raw: RawInput = {},
  options: CallOptions = {},
): Promise<CallOutput<Ops[K]>> {
  const op: Operation = ops[key];
  const handler = handlers.get(op.name);
  if (!handler) throw new Error(`operation ${op.name} has no handler`);
  checkCaller(op, principal);
  const input: OpInput = { ...parsePathAndQuery(op, raw.params ?? {}, raw.query ?? {}), body: parseBody(op, raw.body) };
  const ctx: OpContext = { core, principal, publicUrl: options.publicUrl ?? (() => configuredAddress(core.config)) };
  if (op.headers && options.ifMatch !== undefined) ctx.ifMatch = options.ifMatch;
  let result: unknown;
  const idempotencyKey = op.startsWork ? options.idempotencyKey : undefined;
  if (idempotencyKey !== undefined) {
    assertIdempotencyKey(idempotencyKey);
    // As over HTTP (http/mount.ts): a key already answered is answered again before any rule runs.
    const scope = await idempotencyScope(ctx, op.name, input.params as Record<string, unknown>);
    const stored = await findIdempotentAnswer(ctx, scope, idempotencyKey);
    if (stored) return JSON.parse(stored.body) as CallOutput<Ops[K]>;
    const start: IdempotentStart = { scope, key: idempotencyKey, status: op.successStatus, replayed: null };
    ctx.idempotency = start;
    result = await handler(ctx, input);
    if (start.replayed) return JSON.parse(start.replayed.body) as CallOutput<Ops[K]>;
  } else {
    result = await handler(ctx, input);
  }
  const response = op.response;
  if (response === null) return undefined as CallOutput<Ops[K]>;
  if ("raw" in response) return result as CallOutput<Ops[K]>;
  const parsed = response.safeParse(result);
  if (!parsed.success) throw new Error(`response of ${op.name} does not match the manifest: ${JSON.stringify(zodDetails(parsed.error))}`);
  return parsed.data as CallOutput<Ops[K]>;
}

registerInProcessCall(callOperation);
