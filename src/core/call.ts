// Calls a manifest operation in-process: the caller check and input validation the HTTP edge applies (the same
// codes and `details` paths), then the core handler, then the answer parsed with the operation's response schema.
// `svc admin` and the fast tests call operations this way, so a rule cannot differ by surface.
import type { z } from "zod";
import { ops, type Ops } from "../manifest";
import type { Operation, RawResponse } from "../manifest/define";
import { forbidden, zodDetails } from "../manifest/errors";
import { configuredAddress } from "./address";
import type { Core, IdempotentStart, OpContext, Principal } from "./context";
import type { OpInput, RawBody } from "./handler";
import { assertIdempotencyKey, findIdempotentAnswer, idempotencyScope } from "./idempotency";
import { registerInProcessCall } from "./in-process";
import { parseBody, parsePathAndQuery } from "./input";
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
