// The runner protocol's routes (/api/v1/runner/…, bearer runner token): see docs/runners.md and
// src/manifest/runner-protocol.ts. Every answer is JSON; errors have the API's shape.
import type { Elysia } from "elysia";
import type { z } from "zod";
import type { Core } from "../../core/context";
import type { RunnerRow } from "../../core/runners/operations";
import {
  assertHoldsToken,
  authenticateRunner,
  claimForRunner,
  currentRunner,
  finishForRunner,
  goodbye,
  heartbeatForRunner,
  hello,
  releaseForRunner,
  runStates,
  saveRunnerArtifact,
  seen,
  startForRunner,
  TokenInUse,
} from "../../core/runners/protocol";
import { serverExtensions } from "../../extensions";
import { AppError, invalid } from "../../manifest/errors";
import {
  Claim,
  Finish,
  Heartbeat,
  Hello,
  RUNNER_ARTIFACT_MAX_BYTES,
  RUNNER_BODY_MAX_BYTES,
  RUNNER_PREFIX,
  RUNNER_INSTANCE_HEADER,
  Release,
  RunnerInstance,
  Start,
} from "../../manifest/runner-protocol";
import { bearerToken } from "../auth";
import { errorResponse, responseForError } from "../errors";
import { requestState } from "../request-state";

/** Wakes the requests waiting for something (work queued, a run cancelled). */
class Wakeup {
  private readonly waiters = new Set<() => void>();
  wake = (): void => {
    const all = [...this.waiters];
    this.waiters.clear();
    for (const w of all) w();
  };
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

/**
 * The runner a request's token belongs to, or null; looked up once per request, which both the per-IP budget
 * (isRunnersCall) and the route ask about.
 */
const runnerOfRequest = new WeakMap<Request, Promise<RunnerRow | null>>();
function runnerOf(core: Core, request: Request): Promise<RunnerRow | null> {
  let found = runnerOfRequest.get(request);
  if (!found) {
    const token = bearerToken(request);
    found = token === null ? Promise.resolve(null) : authenticateRunner(core, token);
    runnerOfRequest.set(request, found);
  }
  return found;
}

/** Even without an event, a waiting claim looks at the queue this often (runs queued by another process). */
const CLAIM_RECHECK_MS = 1000;

/** The process a request comes from (X-Svc-Runner-Instance), if it says; a malformed one is a 400. */
function instanceOf(request: Request): string | null {
  const value = request.headers.get(RUNNER_INSTANCE_HEADER);
  if (value === null) return null;
  if (!RunnerInstance.safeParse(value).success)
    throw invalid(`the ${RUNNER_INSTANCE_HEADER} header must be 8 to 64 letters, digits or dashes`, [
      { path: `header.${RUNNER_INSTANCE_HEADER}`, message: "malformed" },
    ]);
  return value;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });

async function readJson<S extends z.ZodType>(request: Request, schema: S): Promise<z.output<S>> {
  const length = Number(request.headers.get("content-length") ?? "0");
  if (length > RUNNER_BODY_MAX_BYTES) throw new AppError("payload_too_large", `a runner's request body is at most ${RUNNER_BODY_MAX_BYTES} bytes`);
  let value: unknown;
  try {
    const text = await request.text();
    value = text === "" ? {} : JSON.parse(text);
  } catch {
    throw invalid("the request body is not JSON", [{ path: "body", message: "not JSON" }]);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: ["body", ...i.path.map(String)].join("."), message: i.message }));
    throw invalid(`invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`, details);
  }
  return parsed.data;
}

export function runnerRoutes(core: Core) {
  const queued = new Wakeup();
  const cancelled = new Wakeup();
  core.events.on("runQueued", queued.wake);
  core.events.on("runCancelled", cancelled.wake);
  // The server is stopping: waiting claims and heartbeats answer now (nothing claimed), or the drain would wait out
  // every connected runner's long-poll; the runner comes back when the server does.
  let closing = false;
  core.events.once("closing", () => {
    closing = true;
    queued.wake();
    cancelled.wake();
  });

  /**
   * Answers with the runner the request's token belongs to, or 401; and, but for a hello, refuses a process that
   * no longer holds the token (see assertHoldsToken).
   */
  function route(
    work: (runner: RunnerRow, request: Request, params: Record<string, string>, instance: string | null) => Promise<unknown>,
    opts: { hello?: boolean } = {},
  ) {
    return async ({ request, params }: { request: Request; params: Record<string, string> }) => {
      const id = requestState(request)?.id ?? "?";
      try {
        const runner = await runnerOf(core, request);
        if (!runner) return errorResponse("unauthorized", "a valid runner token is required (Authorization: Bearer svcr_…); it may have been revoked");
        const instance = instanceOf(request);
        if (!opts.hello) assertHoldsToken(runner, instance);
        return json(await work(runner, request, params ?? {}, instance));
      } catch (e) {
        if (e instanceof TokenInUse)
          return errorResponse(e.code, e.message, { details: e.details, requestId: id, headers: { "retry-after": String(e.retryAfterSeconds) } });
        return responseForError(e, id);
      }
    };
  }

  const current = (runner: RunnerRow) => currentRunner(core, runner);

  return (app: Elysia) =>
    app
      .post(
        `${RUNNER_PREFIX}/hello`,
        route(async (runner, request, _params, instance) => hello(core, runner, await readJson(request, Hello), instance), { hello: true }),
      )
      .post(
        `${RUNNER_PREFIX}/bye`,
        route(async (runner, _request, _params, instance) => goodbye(core, runner, instance)),
      )
      .post(
        `${RUNNER_PREFIX}/claim`,
        route(async (runner, request, _params, instance) => {
          const body = await readJson(request, Claim);
          await seen(core, runner);
          const deadline = Date.now() + body.wait_ms;
          for (;;) {
            // A runner that went away while waiting gets nothing claimed behind its back, nor one of a stopping server.
            if (request.signal.aborted || closing) return { jobs: [] };
            // Nor a process another one took the token from while it waited (it froze past a lease, say): runs and
            // their secrets go only to the process holding the token.
            const now = await current(runner);
            assertHoldsToken(now, instance);
            const jobs = await claimForRunner(core, now, body.slots);
            const left = deadline - Date.now();
            if (jobs.length > 0 || left <= 0) return { jobs };
            await queued.wait(Math.min(CLAIM_RECHECK_MS, left), request.signal);
          }
        }),
      )
      .post(
        `${RUNNER_PREFIX}/start`,
        route(async (runner, request) => startForRunner(core, runner, (await readJson(request, Start)).runs)),
      )
      .post(
        `${RUNNER_PREFIX}/heartbeat`,
        route(async (runner, request) => {
          const body = await readJson(request, Heartbeat);
          const first = await heartbeatForRunner(core, await current(runner), body.runs);
          const wait = Math.min(body.wait_ms, Math.max(200, Math.floor(core.config.runner.lease_ms / 3)));
          if (first.cancelled.length > 0 || first.lost.length > 0 || wait === 0 || body.runs.length === 0 || closing) {
            if (body.runs.length === 0 && wait > 0 && !closing) await cancelled.wait(wait, request.signal);
            return first;
          }
          const deadline = Date.now() + wait;
          for (;;) {
            const left = deadline - Date.now();
            if (left <= 0 || request.signal.aborted || closing) return first;
            await cancelled.wait(left, request.signal);
            const now = await runStates(core, runner, body.runs);
            if (now.cancelled.length > 0 || now.lost.length > 0) return now;
          }
        }),
      )
      .post(
        `${RUNNER_PREFIX}/finish`,
        route(async (runner, request) => finishForRunner(core, runner, (await readJson(request, Finish)).runs)),
      )
      .post(
        `${RUNNER_PREFIX}/release`,
        route(async (runner, request) => releaseForRunner(core, runner, (await readJson(request, Release)).runs)),
      )
      .put(
        `${RUNNER_PREFIX}/runs/:runId/artifacts/:file`,
        route(async (runner, request, params) => {
          const claim = Number(request.headers.get("x-svc-claim"));
          if (!Number.isInteger(claim)) throw invalid("the X-Svc-Claim header must be the run's claim", [{ path: "header.x-svc-claim", message: "required" }]);
          const length = Number(request.headers.get("content-length") ?? "0");
          if (length > RUNNER_ARTIFACT_MAX_BYTES) throw new AppError("payload_too_large", `an artifact is at most ${RUNNER_ARTIFACT_MAX_BYTES} bytes`);
          const bytes = new Uint8Array(await request.arrayBuffer());
          // Decoded once by the router, as every path parameter.
          await saveRunnerArtifact(core, runner, String(params.runId), claim, String(params.file), bytes);
          return { saved: true };
        }),
      ) as unknown as Elysia;
}

/**
 * A runner's calls keep its runs' leases: a request with a valid runner token is spared the per-IP budget (a CI
 * behind the same address using the budget up must not end a healthy runner's runs as "runner lost"). A token that
 * is not a runner's (unknown, revoked) still counts against its address's budget, so floods are limited as before.
 */
async function isRunnersCall(core: Core, request: Request): Promise<boolean> {
  return (await runnerOf(core, request)) !== null;
}

serverExtensions.http.push((core) => ({
  plugins: [runnerRoutes(core)],
  ipBudgetExempt: (request, pathname) => (pathname.startsWith(RUNNER_PREFIX) ? isRunnersCall(core, request) : false),
}));
