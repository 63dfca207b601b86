// Executes one http step with fetch: interpolation, request, assertions, captures, and a size-capped excerpt.
import { httpStepLabel } from "../manifest/step-labels";
import type { Assertion, HttpStep } from "../manifest/automation-format";
import { evaluateAssertion, interpolateAssertion, type AssertionResult, type ObservedResponse } from "./assertions";
import { fetchFollowingRedirects } from "./http-fetch";
import { interpolateJson, interpolateRecord, interpolateText, MissingVariableError } from "./interpolation";
import { readJsonPath } from "../manifest/json-path";
import { readAtMost } from "../streams";
import { assertSecretsMayBeCompared, assertSecretsMayGo, headerParts, stringsIn } from "./secret-hosts";
import { maskExcerpt } from "./secret-masking";
import { resolveUrl, StepFailure, type StepContext, type StepResult } from "./step-result";

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * What a step sends in its URL and its headers, after {{…}}: far above what any server takes (8-16 KiB, commonly),
 * and a bound on what a run records and holds: a large captured value belongs in a body.
 */
const MAX_URL_BYTES = 64 * 1024;
const MAX_HEADERS_BYTES = 64 * 1024;
/** How much of a long URL or header value the step result keeps (the request went out whole). */
const RECORDED_URL_BYTES = 8 * 1024;
const RECORDED_HEADER_BYTES = 2 * 1024;
/** "32 MiB", "512 KiB" or "1000 bytes": the response cap as the step's message names it. */
export function sizeText(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The body as text, or null when it is larger than `maxBytes` (`runner.max_response_bytes`; reading stops
 * there). Assertions see the whole body, so it is held in memory: an endless or huge body must not take the
 * server down.
 */
async function readBody(res: Response, maxBytes: number): Promise<string | null> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  const encoding = res.headers.get("content-encoding");
  // A declared length within the cap bounds what can arrive, unless it is compressed (fetch inflates it, and a
  // few kilobytes of gzip can inflate to gigabytes): then the native reader is the fast path.
  if (Number.isFinite(declared) && declared <= maxBytes && (!encoding || encoding === "identity")) return res.text();
  const bytes = await readAtMost(res.body, maxBytes);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

function excerpt(text: string, maxBytes: number): { body: string; truncated: boolean } {
  // A character is at most 4 bytes in UTF-8: short texts skip the encoding.
  if (text.length * 4 <= maxBytes) return { body: text, truncated: false };
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { body: text, truncated: false };
  return { body: new TextDecoder().decode(bytes.subarray(0, maxBytes)).replace(/\uFFFD$/, ""), truncated: true };
}

function headersRecord(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

/** A URL or header value as the step result keeps it: cut past `maxBytes`, a secret left at the cut masked too. */
function recorded(text: string, maxBytes: number, ctx: StepContext): string {
  const cut = excerpt(text, maxBytes);
  return cut.truncated ? `${maskExcerpt(cut, ctx.mask).body}…` : text;
}

function recordedHeaders(headers: Record<string, string>, ctx: StepContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = recorded(v, RECORDED_HEADER_BYTES, ctx);
  return out;
}

export function httpStepName(step: HttpStep): string {
  return step.name ?? httpStepLabel(step);
}

/** Why fetch failed, in words, with what to do about it. */
function unreachable(method: string, url: string, e: unknown): StepFailure {
  return new StepFailure(
    "error",
    `could not reach ${method} ${url} (${fetchReason(e)}): check that the service is running and that the URL and BASE_URL are right`,
  );
}

function fetchReason(e: unknown): string {
  const err = e as { code?: string; message?: string };
  return (err.code ? `${err.code}: ${err.message ?? ""}` : (err.message ?? String(e))).trim();
}

/** The request failed after the status line arrived: the body is what went wrong, so say that. */
function brokenResponse(method: string, url: string, status: number, e: unknown, timeoutMs: number | null): string {
  if (timeoutMs !== null) {
    return `the response of ${method} ${url} (HTTP ${status}) did not complete within ${timeoutMs} ms: its body arrives too slowly; check the endpoint, or raise request.timeout_ms`;
  }
  return `the response of ${method} ${url} (HTTP ${status}) broke off before its end (${fetchReason(e)}): the service closed or reset the connection mid-response`;
}

/**
 * The request's own signal: aborted when the run's is (cancel, shutdown, the run's timeout), or after `ms` with a
 * TimeoutError as AbortSignal.timeout would. `clear` stops both once the body is read, so no timer outlives the step.
 */
function requestSignal(run: AbortSignal, ms: number): { signal: AbortSignal; fired(): boolean; clear(): void } {
  const controller = new AbortController();
  let fired = false;
  const follow = () => controller.abort(run.reason);
  if (run.aborted) follow();
  else run.addEventListener("abort", follow, { once: true });
  const timer = setTimeout(() => {
    fired = true;
    controller.abort(new DOMException("The operation timed out.", "TimeoutError"));
  }, ms);
  return {
    signal: controller.signal,
    fired: () => fired,
    clear: () => {
      clearTimeout(timer);
      run.removeEventListener("abort", follow);
    },
  };
}

export async function executeHttpStep(step: HttpStep, index: number, ctx: StepContext): Promise<StepResult> {
  const started = performance.now();
  const name = httpStepName(step);
  const req = step.request;
  let url: string;
  let headers: Record<string, string>;
  let body: string | undefined;
  let expectations: Assertion[];
  try {
    url = resolveUrl(interpolateText(req.url, ctx.vars), ctx.baseUrl);
    if (req.query) {
      const u = new URL(url);
      for (const [k, v] of Object.entries(interpolateRecord(req.query, ctx.vars))) u.searchParams.append(k, v);
      url = u.toString();
    }
    headers = interpolateRecord(req.headers, ctx.vars);
    if (req.json !== undefined) {
      body = JSON.stringify(interpolateJson(req.json, ctx.vars));
      if (!Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
    } else if (req.body !== undefined) body = interpolateText(req.body, ctx.vars);
    // Before the request: an assertion naming an undefined variable stops the step without sending anything.
    expectations = (step.expect ?? []).map((a, i) => interpolateAssertion(a, ctx.vars, `expect.${i}`));
  } catch (e) {
    if (e instanceof MissingVariableError || e instanceof StepFailure) throw e;
    throw new StepFailure("error", `the request cannot be built: ${(e as Error).message}`);
  }
  const urlBytes = Buffer.byteLength(url);
  if (urlBytes > MAX_URL_BYTES)
    throw new StepFailure(
      "error",
      `the request's URL is ${sizeText(urlBytes)} long after {{…}}: svc sends URLs of at most ${sizeText(MAX_URL_BYTES)}; send large values in the body`,
    );
  const headerBytes = Object.entries(headers).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (headerBytes > MAX_HEADERS_BYTES)
    throw new StepFailure(
      "error",
      `the request's headers are ${sizeText(headerBytes)} after {{…}}: svc sends at most ${sizeText(MAX_HEADERS_BYTES)} of headers; send large values in the body`,
    );
  // In a protected environment, checks holding a secret are made only against what an allowed host answers.
  const compared = ctx.secretHosts ? stringsIn(expectations) : null;
  if (compared) assertSecretsMayBeCompared(ctx, url, compared);
  const request: NonNullable<StepResult["request"]> = { method: req.method, url: recorded(url, RECORDED_URL_BYTES, ctx) };
  if (body !== undefined) request.body = maskExcerpt(excerpt(body, ctx.excerptBytes), ctx.mask).body;
  const timeoutMs = req.timeout_ms ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // When the run's own deadline comes first, its abort (timed_out) must win over a request timeout (error).
  const timeout = timeoutMs < ctx.remainingMs() ? requestSignal(ctx.signal, timeoutMs) : null;
  let res: Response;
  let text: string | null;
  let answered: number | null = null;
  try {
    const fetched = await fetchFollowingRedirects(
      { method: req.method, url, headers, body },
      {
        followRedirects: req.follow_redirects !== false,
        cookies: ctx.cookies,
        signal: timeout ? timeout.signal : ctx.signal,
        // Only a protected environment checks where its secrets go.
        beforeSend: ctx.secretHosts ? (hop) => assertSecretsMayGo(ctx, hop.url, [hop.url, ...headerParts(hop.headers), hop.body]) : undefined,
      },
    );
    res = fetched.response;
    // What went out includes the cookies the run's jar added.
    if (Object.keys(fetched.sent.headers).length) request.headers = recordedHeaders(fetched.sent.headers, ctx);
    // A redirect may have ended on another host: its answer is not checked against a secret either.
    if (compared && fetched.answeredBy !== url) {
      try {
        assertSecretsMayBeCompared(ctx, fetched.answeredBy, compared);
      } catch (e) {
        await res.body?.cancel().catch(() => undefined);
        throw e;
      }
    }
    answered = res.status;
    text = req.method === "HEAD" ? "" : await readBody(res, ctx.maxResponseBytes);
  } catch (e) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    // Nothing was sent, or no answer came: the headers the step asked for are what it records.
    if (request.headers === undefined && Object.keys(headers).length) request.headers = recordedHeaders(headers, ctx);
    if (e instanceof StepFailure) return { index, name, status: e.status, duration_ms: performance.now() - started, message: e.message, request };
    const timedOut = timeout?.fired() === true;
    const message =
      answered !== null
        ? brokenResponse(req.method, url, answered, e, timedOut ? timeoutMs : null)
        : timedOut
          ? `no response from ${req.method} ${url} within ${timeoutMs} ms: check the endpoint, or raise request.timeout_ms`
          : unreachable(req.method, url, e).message;
    return { index, name, status: "error", duration_ms: performance.now() - started, message, request };
  } finally {
    timeout?.clear();
  }
  const durationMs = performance.now() - started;
  if (text === null) {
    return {
      index,
      name,
      status: "error",
      duration_ms: durationMs,
      request,
      message: `the response of ${req.method} ${url} is larger than ${sizeText(ctx.maxResponseBytes)}: svc stopped reading it (runner.max_response_bytes); assert on a smaller response`,
      response: { status: res.status, headers: headersRecord(res.headers), body: "", truncated: true },
    };
  }
  let parsed: ReturnType<ObservedResponse["json"]> | null = null;
  const observed: ObservedResponse = {
    status: res.status,
    headers: res.headers,
    text,
    durationMs,
    json: () => {
      if (!parsed) {
        try {
          parsed = { ok: true, value: JSON.parse(text) };
        } catch (e) {
          parsed = { ok: false, error: (e as Error).message };
        }
      }
      return parsed;
    },
  };
  const assertions: AssertionResult[] = [];
  const failures: string[] = [];
  for (const a of expectations) {
    for (const r of evaluateAssertion(a, observed)) {
      assertions.push(r);
      if (!r.passed) failures.push(r.message);
    }
  }
  if (step.capture)
    for (const [variable, capture] of Object.entries(step.capture)) {
      const c = typeof capture === "string" ? (capture.toLowerCase().startsWith("header:") ? { header: capture.slice(7).trim() } : { json: capture }) : capture;
      if ("header" in c) {
        const v = res.headers.get(c.header);
        if (v === null) failures.push(`capture ${variable}: the response has no header ${c.header}`);
        else ctx.vars.set(variable, v);
        continue;
      }
      const j = observed.json();
      const r = j.ok ? readJsonPath(j.value, c.json) : { found: false, value: undefined };
      if (!r.found) failures.push(`capture ${variable}: ${c.json} is not in the response${j.ok ? "" : " (the body is not JSON)"}`);
      else ctx.vars.set(variable, r.value);
    }
  const { body: bodyExcerpt, truncated } = maskExcerpt(excerpt(text, ctx.excerptBytes), ctx.mask);
  return {
    index,
    name,
    status: failures.length ? "failed" : "passed",
    duration_ms: durationMs,
    message: failures.length ? failures.join("; ") : null,
    assertions,
    request,
    response: { status: res.status, headers: headersRecord(res.headers), body: bodyExcerpt, truncated },
  };
}
