// Executes one attempt of a run: the steps in order, every step after a failure skipped, a screenshot on failure.
import type { BrowserContext, Page } from "playwright-core";
import { BrowserStep, HttpStep, stepKindProblems, type Step } from "../manifest/automation-format";
import type { RunSpec } from "../core/runs/operations";
import { browserStepName, executeBrowserStep, screenshot } from "./browser-step";
import type { SharedBrowser } from "./chromium";
import { executeHttpStep, httpStepName } from "./http-step";
import { TextMemo } from "../memo";
import { MissingVariableError } from "./interpolation";
import { openGuardedPage } from "./navigation-guard";
import { StepFailure, type StepContext, type StepResult } from "./step-result";

export interface AttemptOutcome {
  status: "passed" | "failed" | "error";
  error: string | null;
  steps: StepResult[];
  artifacts: string[];
}

/** Thrown through the steps when the run is stopped from outside. */
export class RunAborted extends Error {
  /** The steps reached before the stop, filled in by the attempt that was running. */
  partial: AttemptOutcome | null = null;
  /**
   * timeout: the run's own; cancelled: asked for; shutdown: the server is stopping; runner_stopped: the runner
   * executing it is stopping (stopped, or its token revoked); taken_back: the server ended it (the runner's lease
   * on it expired).
   */
  constructor(readonly reason: "timeout" | "cancelled" | "shutdown" | "runner_stopped" | "taken_back") {
    super(reason);
  }
}

type Validated = { steps: Step[] } | { problem: string };

/** Keyed by the stored snapshot: re-running an automation does not validate the same steps again. */
const validated = new TextMemo<Validated>(5000);

/** Steps were validated when saved; a snapshot that no longer parses (an older format, a bad import) is an error run. */
export function validateSteps(spec: RunSpec, specText: string): Validated {
  return validated.get(specText, () => validateFresh(spec));
}

function validateFresh(spec: RunSpec): Validated {
  if (!Array.isArray(spec.steps) || spec.steps.length === 0)
    return { problem: "the automation has no steps: add at least one step (update_automation) and run it again" };
  const steps: Step[] = [];
  for (let i = 0; i < spec.steps.length; i++) {
    const raw = spec.steps[i];
    // Picking the branch first is 4x cheaper than the union, and its error names the real problem.
    const r = raw !== null && typeof raw === "object" && "request" in raw ? HttpStep.safeParse(raw) : BrowserStep.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0];
      const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
      return {
        problem: `step ${i + 1} is invalid${where}: ${issue?.message ?? "unknown shape"}; fix the automation's steps (see docs/automations.md) and run it again`,
      };
    }
    steps.push(r.data);
  }
  const kindProblem = stepKindProblems(spec.kind, steps)[0];
  if (kindProblem)
    return { problem: `step ${Number(kindProblem.path.split(".")[1]) + 1}: ${kindProblem.message}; make it a browser automation or remove the step` };
  return { steps };
}

const stepName = (s: Step) => ("request" in s ? httpStepName(s) : browserStepName(s));

/** Launching a browser or opening a context does not listen to the run's signal: stop waiting when it fires. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal, discard?: (late: T) => void): Promise<T> {
  if (signal.aborted) {
    if (discard) work.then(discard, () => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (discard) work.then(discard, () => undefined);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) return;
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

export interface AttemptDeps {
  browser: SharedBrowser;
  /** Called after each step, so long runs can show progress. */
  onStep(steps: StepResult[]): void;
}

export async function runAttempt(steps: Step[], ctx: StepContext, deps: AttemptDeps): Promise<AttemptOutcome> {
  const results: StepResult[] = [];
  const artifacts: string[] = [];
  let context: BrowserContext | null = null;
  let page: Page | null = null;
  const closeContext = () => {
    const c = context;
    context = null;
    return c ? c.close().catch(() => undefined) : Promise.resolve();
  };
  // Closing the context makes whatever Playwright is waiting for fail at once, so cancel and timeout are prompt.
  // Listened to from the first browser step on: before it there is no context to close.
  const onAbort = () => void closeContext();
  let listening = false;
  let stopped: StepResult | null = null;
  /** When the step in progress began: a step stopped midway says how long it had run. */
  let stepStarted = performance.now();
  try {
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as Step;
      if (stopped) {
        results.push({ index: i, name: stepName(step), status: "skipped", duration_ms: 0, message: `skipped: step ${stopped.index + 1} ${stopped.status}` });
        continue;
      }
      if (ctx.signal.aborted) throw ctx.signal.reason;
      let r: StepResult;
      const started = performance.now();
      stepStarted = started;
      try {
        if ("request" in step) r = await executeHttpStep(step, i, ctx);
        else {
          if (!page) {
            if (!listening) {
              listening = true;
              ctx.signal.addEventListener("abort", onAbort, { once: true });
            }
            const browser = await untilAborted(deps.browser.get(), ctx.signal);
            const fresh = await untilAborted(openGuardedPage(browser, ctx.secretHosts), ctx.signal, (late) => void late.context.close().catch(() => undefined));
            context = fresh.context;
            page = fresh.page;
          }
          r = await executeBrowserStep(page, step, i, ctx);
          if (r.status === "failed" || r.status === "error") {
            const shot = await screenshot(page, ctx, `${String(i + 1).padStart(2, "0")}-failure`).catch(() => null);
            if (shot) r.artifacts = [...(r.artifacts ?? []), shot];
          }
        }
      } catch (e) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const message = e instanceof StepFailure || e instanceof MissingVariableError ? e.message : `the step could not run: ${(e as Error).message}`;
        r = { index: i, name: stepName(step), status: e instanceof StepFailure ? e.status : "error", duration_ms: performance.now() - started, message };
      }
      results.push(r);
      if (r.artifacts) artifacts.push(...r.artifacts);
      if (r.status === "failed" || r.status === "error") stopped = r;
      deps.onStep(results);
    }
  } catch (e) {
    if (e instanceof RunAborted) {
      const at = results.length;
      for (let i = at; i < steps.length; i++) {
        const step = steps[i] as Step;
        results.push({
          index: i,
          name: stepName(step),
          status: i === at ? "error" : "skipped",
          duration_ms: i === at ? performance.now() - stepStarted : 0,
          message:
            i === at
              ? `stopped: the run ${e.reason === "timeout" ? "timed out" : e.reason === "cancelled" ? "was cancelled" : "was interrupted by a server shutdown"}`
              : "skipped: the run was stopped",
        });
      }
      e.partial = { status: "error", error: null, steps: results, artifacts };
    }
    throw e;
  } finally {
    if (listening) ctx.signal.removeEventListener("abort", onAbort);
    await closeContext();
  }
  const firstBad = results.find((r) => r.status === "error" || r.status === "failed");
  const errored = results.find((r) => r.status === "error");
  return {
    status: errored ? "error" : firstBad ? "failed" : "passed",
    error: errored ? `step ${errored.index + 1} (${errored.name}): ${errored.message ?? "error"}` : null,
    steps: results,
    artifacts,
  };
}
