// The one typed HTTP client of the API, derived from the manifest; the CLI and the MCP server both use it.
import type { z } from "zod";
import { API_PREFIX, type Operation, ops, type RawResponse } from "../manifest/index";
import type { OpKey, Ops } from "../manifest/index";
import type { IfMatchHeaders } from "../manifest/define";
import { codeForStatus, ERROR_TABLE, type ErrorCode } from "../manifest/errors";
import { ClientError } from "./errors";
import { readEvents } from "./event-stream";
import { operationPath } from "./operation-url";
import { splitInput } from "./schema-fields";
import { certificateProblem } from "./tls-trust";

// An empty z.object({}) has the input type Record<string, never>, which would poison the intersection.
type NoFields = Record<never, never>;
type Fields<T> = string extends keyof T ? NoFields : T;
type SchemaIn<S> = S extends z.ZodNever ? NoFields : S extends z.ZodType ? Fields<Exclude<z.input<S>, undefined>> : NoFields;
/** One flat object: path parameters, query and body fields together (as the MCP tools take them). */
export type OpInput<K extends OpKey> = SchemaIn<Ops[K]["params"]> &
  SchemaIn<Ops[K]["query"]> &
  SchemaIn<NonNullable<Ops[K]["body"]>> &
  // Sent as a header by the operations that read it (PATCH and DELETE of a versioned record: If-Match).
  Partial<z.input<typeof IfMatchHeaders>>;
export type OpOutput<K extends OpKey> = Ops[K]["response"] extends z.ZodType
  ? z.output<Ops[K]["response"]>
  : Ops[K]["response"] extends RawResponse
    ? RawBody
    : null;

export interface RawBody {
  contentType: string;
  bytes: Uint8Array;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export interface ApiResponse {
  status: number;
  /** The JSON body, parsed (null for 204 and raw bodies). */
  json: unknown;
  /** The JSON body exactly as the API sent it, unparsed (null for 204 and raw bodies): what `--json` prints. */
  text: string | null;
  raw: RawBody | null;
  rateLimit: RateLimitState | null;
}

export interface RetryNotice {
  status: number;
  attempt: number;
  waitMs: number;
}

/** A wait in words, as long as it really is: "100 ms", "1 s", "1.5 s". */
export function describeWait(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${Number((ms / 1000).toFixed(1))} s`;
}

export interface ClientOptions {
  server: string;
  key: string | null;
  /** `svc-cli/<version>` or `svc-mcp/<version>`: the server records the run trigger from it. */
  userAgent: string;
  /** Per request, default 30 s. */
  timeoutMs?: number;
  /** Retries after a 429 or 503, default 3 (a failed connection on a read is retried once). */
  maxRetries?: number;
  /** The longest Retry-After honoured; a longer one fails at once as rate_limited. Default 60 s. */
  maxRetryWaitSeconds?: number;
  onRetry?: (notice: RetryNotice) => void;
  sleep?: (ms: number) => Promise<void>;
}

export interface SendOptions {
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** How long this request may take (a long-poll's wait and then some); by default the client's timeout. */
  timeoutMs?: number;
  /**
   * On an operation that may stream (a `stream` in the manifest): ask for the event stream and get each of its
   * events (parsed JSON) as it arrives; the answer is still the one its `done` event carries.
   */
  onEvent?: (event: string, data: unknown) => void;
}

/** A read asked to wait (`?wait=N`) may take N seconds before its answer even starts. */
function longPollTimeoutMs(input: Record<string, unknown>): number | undefined {
  const wait = Number(input.wait ?? 0);
  return Number.isFinite(wait) && wait > 0 ? (wait + 30) * 1000 : undefined;
}

function headerNumber(h: Headers, name: string): number | null {
  const v = h.get(name);
  if (v === null || v.trim() === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** Retry-After is seconds or an HTTP date. */
function retryAfterSeconds(h: Headers): number | null {
  const v = h.get("retry-after");
  if (!v) return null;
  const n = Number(v);
  if (Number.isFinite(n)) return Math.max(0, n);
  const t = Date.parse(v);
  return Number.isNaN(t) ? null : Math.max(0, Math.ceil((t - Date.now()) / 1000));
}

function rateLimitOf(h: Headers): RateLimitState | null {
  const limit = headerNumber(h, "ratelimit-limit");
  const remaining = headerNumber(h, "ratelimit-remaining");
  const reset = headerNumber(h, "ratelimit-reset");
  if (limit === null || remaining === null) return null;
  return { limit, remaining, resetSeconds: reset ?? 0 };
}

function errorFromBody(status: number, text: string, retryAfter: number | null): ClientError {
  try {
    const b = JSON.parse(text) as { error?: unknown; message?: unknown; details?: unknown };
    if (typeof b.error === "string" && typeof b.message === "string") {
      const details = Array.isArray(b.details) ? (b.details as { path: string; message: string }[]) : undefined;
      return new ClientError(status, b.error, b.message, details, retryAfter ?? undefined);
    }
  } catch {
    // not JSON: a proxy's page or a crash; fall through to a generic error
  }
  const snippet = text.trim().slice(0, 200);
  return new ClientError(status, codeForStatus(status), `HTTP ${status}${snippet ? `: ${snippet}` : ""}`, undefined, retryAfter ?? undefined);
}

export class ApiClient {
  /** The rate-limit headers of the latest response, for pollers that should slow down. */
  lastRateLimit: RateLimitState | null = null;
  private readonly base: string;

  constructor(readonly options: ClientOptions) {
    this.base = options.server.replace(/\/+$/, "") + API_PREFIX;
  }

  /** Calls an operation (by its manifest export, e.g. "getRun") with one flat input; returns the validated response. */
  async call<K extends OpKey>(key: K, input: OpInput<K>, opts: SendOptions = {}): Promise<OpOutput<K>> {
    const op: Operation = ops[key];
    const res = await this.send(op, input as Record<string, unknown>, opts);
    return (op.response === null ? null : (res.raw ?? res.json)) as OpOutput<K>;
  }

  urlFor(op: Operation, input: Record<string, unknown>): string {
    return `${this.base}${operationPath(op, input)}`;
  }

  /** Sends one operation, retrying 429 (after Retry-After) and 503 (with backoff) a bounded number of times. */
  async send(op: Operation, input: Record<string, unknown>, opts: SendOptions = {}): Promise<ApiResponse> {
    const url = this.urlFor(op, input);
    const { body, headers: given } = splitInput(op, input);
    const onEvent = op.stream ? opts.onEvent : undefined;
    const headers: Record<string, string> = {
      ...given,
      "user-agent": this.options.userAgent,
      accept: onEvent ? "text/event-stream, application/json" : "application/json",
    };
    if (this.options.key) headers.authorization = `Bearer ${this.options.key}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    // One key for every attempt: a retried start returns the first run instead of starting a second.
    if (op.startsWork) headers["idempotency-key"] = opts.idempotencyKey ?? crypto.randomUUID();
    const maxRetries = this.options.maxRetries ?? 3;
    const maxWait = this.options.maxRetryWaitSeconds ?? 60;
    const sleep = this.options.sleep ?? ((ms: number) => Bun.sleep(ms));
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchOnce(url, op.method, headers, body, opts.signal, opts.timeoutMs ?? longPollTimeoutMs(input));
      } catch (e) {
        // A certificate this machine refuses stays refused: said at once, with what fixes it, and not retried.
        const untrusted = certificateProblem(e, this.options.server);
        if (untrusted !== null) throw new ClientError(0, "network_error", untrusted);
        const err = e instanceof ClientError ? e : new ClientError(0, "network_error", `cannot reach ${this.options.server}: ${(e as Error).message}`);
        // One quick retry of a read covers a server restarting; a refused connection rarely heals in seconds.
        // A read its caller aborted (Ctrl+C, a cancelled MCP call) is not retried.
        if (err.error === "network_error" && op.method === "GET" && attempt < Math.min(1, maxRetries) && !opts.signal?.aborted) {
          const waitMs = 500;
          this.options.onRetry?.({ status: 0, attempt: attempt + 1, waitMs });
          await sleep(waitMs);
          continue;
        }
        throw err;
      }
      this.lastRateLimit = rateLimitOf(res.headers) ?? this.lastRateLimit;
      if (res.ok) {
        const streamed = onEvent && (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
        return streamed ? this.readStream(op, res, onEvent) : this.readSuccess(op, res);
      }
      // Redirects are not followed (the key must not go to another address): say where to point the client instead.
      if (res.status >= 300 && res.status < 400) throw this.redirectError(res, url);
      const text = await res.text();
      const retryAfter = retryAfterSeconds(res.headers);
      const err = errorFromBody(res.status, text, retryAfter);
      if (attempt < maxRetries && res.status === 429 && retryAfter !== null && retryAfter <= maxWait) {
        const waitMs = Math.max(retryAfter * 1000, 100);
        this.options.onRetry?.({ status: 429, attempt: attempt + 1, waitMs });
        await sleep(waitMs);
        continue;
      }
      if (attempt < maxRetries && res.status === 503) {
        const waitMs = retryAfter !== null && retryAfter <= maxWait ? retryAfter * 1000 : Math.min(500 * 2 ** attempt, 8000);
        this.options.onRetry?.({ status: 503, attempt: attempt + 1, waitMs });
        await sleep(waitMs);
        continue;
      }
      throw err;
    }
  }

  /** A redirect (http:// to https://, a moved host): where it leads, as the server address to give instead. */
  private redirectError(res: Response, url: string): ClientError {
    res.body?.cancel().catch(() => undefined);
    const server = this.options.server.replace(/\/+$/, "");
    const location = res.headers.get("location");
    let to = location && URL.canParse(location, url) ? new URL(location, url).href : null;
    // The same API path under another base: that base is the server to use.
    const rest = url.slice(server.length);
    if (to?.endsWith(rest)) to = to.slice(0, to.length - rest.length);
    const where = to ? ` to ${to}` : "";
    return new ClientError(
      res.status,
      "invalid_request",
      `${server} answered with a redirect (HTTP ${res.status})${where}; svc does not follow redirects, so that the key is never sent elsewhere: ` +
        `give ${to ? "that address" : "the server's own address"} as the server (--server, SVC_SERVER or .svc.json)`,
    );
  }

  private async fetchOnce(
    url: string,
    method: string,
    headers: Record<string, string>,
    body: unknown,
    signal?: AbortSignal,
    requestTimeoutMs?: number,
  ): Promise<Response> {
    const timeoutMs = Math.max(requestTimeoutMs ?? 0, this.options.timeoutMs ?? 30_000);
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: "manual",
      });
    } catch (e) {
      if (timeout.aborted) throw new ClientError(0, "timeout", `no answer from ${this.options.server} within ${Math.round(timeoutMs / 1000)} s`);
      throw e;
    }
  }

  /** An event stream: each event to `onEvent`, then the answer its `done` event carries (or its `error`). */
  private async readStream(op: Operation, res: Response, onEvent: (event: string, data: unknown) => void): Promise<ApiResponse> {
    const rateLimit = rateLimitOf(res.headers);
    try {
      for await (const { event, data } of readEvents(res.body as ReadableStream<Uint8Array>)) {
        const value = JSON.parse(data) as unknown;
        if (event === "done") return { ...this.checkedJson(op, res.status, value), text: data, raw: null, rateLimit };
        if (event === "error") {
          const e = value as { error?: string; message?: string; details?: { path: string; message: string }[] };
          const code = typeof e.error === "string" && e.error in ERROR_TABLE ? (e.error as ErrorCode) : "internal_error";
          throw new ClientError(ERROR_TABLE[code].status, code, e.message ?? "the answer failed", e.details);
        }
        onEvent(event, value);
      }
    } catch (e) {
      if (e instanceof ClientError) throw e;
      throw new ClientError(0, "network_error", `the answer of ${op.name} from ${this.options.server} broke off: ${(e as Error).message}`);
    }
    throw new ClientError(0, "network_error", `the answer of ${op.name} from ${this.options.server} ended before it was done`);
  }

  /** A JSON answer checked against the operation's response schema. */
  private checkedJson(op: Operation, status: number, json: unknown): { status: number; json: unknown } {
    const checked = (op.response as z.ZodType).safeParse(json);
    if (!checked.success) {
      const first = checked.error.issues[0];
      throw new ClientError(
        status,
        "invalid_response",
        `the server's answer to ${op.name} does not match the API contract (${first?.path.join(".") || "body"}: ${first?.message ?? "invalid"}); are the CLI and server versions the same?`,
      );
    }
    return { status, json };
  }

  private async readSuccess(op: Operation, res: Response): Promise<ApiResponse> {
    const rateLimit = rateLimitOf(res.headers);
    if (op.response === null) {
      await res.body?.cancel();
      return { status: res.status, json: null, text: null, raw: null, rateLimit };
    }
    if ("raw" in op.response) {
      const bytes = new Uint8Array(await res.arrayBuffer());
      return { status: res.status, json: null, text: null, raw: { contentType: res.headers.get("content-type") ?? op.response.contentType, bytes }, rateLimit };
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ClientError(res.status, "invalid_response", `the server answered ${op.name} with something that is not JSON`);
    }
    this.checkedJson(op, res.status, json);
    return { status: res.status, json, text, raw: null, rateLimit };
  }
}
