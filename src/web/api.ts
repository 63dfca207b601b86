// The web application's HTTP client: the manifest's operations, called by name with typed input and parsed by
// their response schemas (as the CLI and the MCP server call them), with the session cookie and the CSRF token
// instead of a key; plus the few /api/v1/web routes of a signed-in person.
import type { OpInput, OpOutput } from "../client/api-client";
import { readEvents } from "../client/event-stream";
import { operationPath } from "../client/operation-url";
import { splitInput } from "../client/schema-fields";
import type { z } from "zod";
import { ERROR_TABLE, type ErrorCode } from "../manifest/errors";
import { API_PREFIX, type OpKey, type Operation, ops } from "../manifest/index";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

let csrfToken = "";
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/** The ETag of each record as this page last read or saved it, by id, with the updated_at it was read at. */
const versions = new Map<string, { tag: string; stamp: unknown }>();

/** The ETag of this version of a record (the one with its updated_at), if this page has read it. */
export function versionOf(record: { id: string; updated_at?: string }): string | undefined {
  const held = versions.get(record.id);
  if (!held) return undefined;
  return record.updated_at === undefined || held.stamp === record.updated_at ? held.tag : undefined;
}

async function send(method: string, url: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<unknown> {
  const headers: Record<string, string> = { ...extraHeaders, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET") headers["x-csrf-token"] = csrfToken;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  return answerOf(res, url);
}

/** A response's JSON answer, or its error as an ApiError. */
async function answerOf(res: Response, url: string): Promise<unknown> {
  if (res.status === 204) return undefined;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, "invalid_response", `the server answered ${res.status} with something that is not JSON`);
  }
  if (!res.ok) {
    const e = (parsed ?? {}) as { error?: string; message?: string; details?: { path: string; message: string }[] };
    if (res.status === 401 && url.startsWith(API_PREFIX)) onSignedOut();
    throw new ApiError(res.status, e.error ?? "error", e.message ?? `request failed (${res.status})`, e.details ?? []);
  }
  const etag = res.headers.get("etag");
  const record = parsed && typeof parsed === "object" ? (parsed as { id?: unknown; user_id?: unknown; updated_at?: unknown }) : {};
  const id = record.id ?? record.user_id;
  if (etag && typeof id === "string") versions.set(id, { tag: etag, stamp: record.updated_at });
  return parsed;
}

/** The operation declared under `key` in the manifest (an export name such as "getRun"). */
function operation(key: OpKey): Operation {
  return ops[key];
}

/** Calls an operation by its manifest name with one flat input (path, query and body fields); returns its parsed answer. */
export async function call<K extends OpKey>(key: K, input: OpInput<K>): Promise<OpOutput<K>> {
  const op = operation(key);
  const fields = { ...(input as Record<string, unknown>) };
  // A change of a record this page read carries its version, so another tab's or person's change is not overwritten
  // silently: the server answers 412 precondition_failed instead (see StaleEdit).
  if (op.headers && "if_match" in op.headers.shape && fields.if_match === undefined) {
    const held = Object.values(splitInput(op, fields).params)
      .map((v) => versions.get(v)?.tag)
      .find((v) => v !== undefined);
    if (held) fields.if_match = held;
  }
  const parts = splitInput(op, fields);
  const answer = await send(op.method, `${API_PREFIX}${operationPath(op, fields)}`, parts.body, parts.headers);
  if (op.response === null || "raw" in op.response) return null as OpOutput<K>;
  const checked = op.response.safeParse(answer);
  if (!checked.success) {
    const first = checked.error.issues[0];
    throw new ApiError(
      200,
      "invalid_response",
      `the server's answer to ${op.name} does not match the API contract (${first?.path.join(".") || "body"}: ${first?.message ?? "invalid"})`,
    );
  }
  return checked.data as OpOutput<K>;
}

/** The most items a page reads of one list, page after page (see allPages). */
export const ALL_PAGES_MOST = 10_000;

/**
 * Every item of a list, page after page, up to `most`: what a page shows or counts whole (a project's automations,
 * their health, a picker) must not stop at the first page once a team has more than one page of them. The answer
 * has a page's shape; its `next_cursor` is null unless the list goes on beyond `most`.
 */
export async function allPages<T>(
  page: (cursor: string | undefined) => Promise<{ data: T[]; next_cursor: string | null }>,
  most = ALL_PAGES_MOST,
): Promise<{ data: T[]; next_cursor: string | null }> {
  const data: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const p = await page(cursor);
    data.push(...p.data);
    if (p.next_cursor === null || data.length >= most) return { data, next_cursor: p.next_cursor };
    cursor = p.next_cursor;
  }
}

/** An answer (or a streamed event) checked against its schema in the manifest. */
function checked(op: Operation, what: string, schema: z.ZodType, value: unknown): unknown {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  throw new ApiError(
    200,
    "invalid_response",
    `the server's ${what} of ${op.name} does not match the API contract (${first?.path.join(".") || "body"}: ${first?.message ?? "invalid"})`,
  );
}

/**
 * Calls an operation that may stream (a `stream` in the manifest) as an event stream: `onEvent` gets each of its
 * events as it arrives, checked against the manifest; resolves to the answer its `done` event carries. An error
 * before the stream began, or its `error` event, is an ApiError.
 */
export async function callStream<K extends OpKey>(key: K, input: OpInput<K>, onEvent: (event: string, data: unknown) => void): Promise<OpOutput<K>> {
  const op = operation(key);
  if (!op.stream || op.response === null || "raw" in op.response) throw new Error(`${op.name} does not stream`);
  const fields = input as Record<string, unknown>;
  const parts = splitInput(op, fields);
  const url = `${API_PREFIX}${operationPath(op, fields)}`;
  const headers: Record<string, string> = { ...parts.headers, accept: "text/event-stream", "x-csrf-token": csrfToken };
  if (parts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: op.method,
    headers,
    body: parts.body === undefined ? undefined : JSON.stringify(parts.body),
    credentials: "same-origin",
  });
  if (!res.ok || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream") || !res.body) {
    return checked(op, "answer", op.response, await answerOf(res, url)) as OpOutput<K>;
  }
  for await (const { event, data } of readEvents(res.body)) {
    const value = JSON.parse(data) as unknown;
    if (event === "done") return checked(op, "answer", op.response, value) as OpOutput<K>;
    if (event === "error") {
      const e = value as { error?: string; message?: string; details?: { path: string; message: string }[] };
      const status = e.error && e.error in ERROR_TABLE ? ERROR_TABLE[e.error as ErrorCode].status : 500;
      throw new ApiError(status, e.error ?? "error", e.message ?? "the answer failed", e.details ?? []);
    }
    const schema = op.stream.events[event];
    if (schema) onEvent(event, checked(op, `event ${event}`, schema, value));
  }
  throw new ApiError(502, "invalid_response", `the answer of ${op.name} ended before it was done`);
}

/** The address of an operation's answer, for a link or an image (a JUnit report, a screenshot). */
export function operationHref<K extends OpKey>(key: K, input: OpInput<K>): string {
  return `${API_PREFIX}${operationPath(operation(key), input as Record<string, unknown>)}`;
}

/** Calls a route of the web application itself; `path` is below /api/v1/web. */
export const web = <T>(method: "GET" | "POST", path: string, body?: unknown) => send(method, `/api/v1/web${path}`, body) as Promise<T>;

export const enc = encodeURIComponent;

/** A form's "any" choice (the empty string) as an unset field: a filter left open is not sent at all. */
export const chosen = <T extends string>(value: T | ""): T | undefined => (value === "" ? undefined : value);
