// Executes one claimed run from its first step to its outcome — attempts, retries, timeout, masking — with no
// database and no data directory: what it needs arrives in the job, and artifacts leave through `saveArtifact`.
// The same function runs in the server's engine, in a worker process and in a remote runner.
import type { FinalRunStatus, RunAttempt, RunEnvironment, RunSummaryCounts } from "../core/runs/queue";
import type { RunSpec } from "../core/shared/columns";
import type { SharedBrowser } from "./chromium";
import { RunCookies } from "./http-fetch";
import { RunAborted, runAttempt, validateSteps } from "./run-attempt";
import { type Masker, maskDeep, secretMasker } from "./secret-masking";
import type { StepContext, StepResult } from "./step-result";

/** Everything a run needs to execute, as plain data (it crosses process and network boundaries). */
export interface RunJob {
  id: string;
  automationId: string;
  spec: RunSpec | null;
  /** The snapshot as stored: a key for caching what was derived from it. */
  specText: string;
  environmentId: string | null;
  environment: RunEnvironment | null;
  /** Attempts made before (a runner lost while executing the run): kept first, and counted against its retries. */
  priorAttempts?: RunAttempt[];
}

/** The runner settings execution depends on. */
export interface ExecutionSettings {
  defaultTimeoutMs: number;
  excerptBytes: number;
  maxResponseBytes: number;
}

/** What a run came to, every text already masked. */
export interface JobResult {
  status: FinalRunStatus;
  error: string | null;
  /** For a failed run, its first failed step in one line, for the log. */
  failure?: string;
  summary: RunSummaryCounts;
  steps: StepResult[];
  artifacts: string[];
  attempts: RunAttempt[];
  /** `{steps, artifacts}` as JSON when the executor has it at hand (made where the run executed): saves serializing it again. */
  resultsJson?: string;
}

/** The steps reached so far, masked, for runs long enough to show progress. */
export interface JobProgress {
  steps: StepResult[];
  summary: RunSummaryCounts;
  attempts: RunAttempt[];
}

export interface ExecuteDeps {
  /** Aborted with a RunAborted("cancelled" | "shutdown") from outside; the run's own timeout is handled here. */
  signal: AbortSignal;
  /**
   * The controller of `signal`, when the caller made it for this run alone: the run's timeout aborts it, instead
   * of a second controller that follows `signal` (one fewer controller and listener per run).
   */
  controller?: AbortController;
  browser: SharedBrowser;
  settings: ExecutionSettings;
  /** Keeps an artifact (a screenshot) of the run under `file`. */
  saveArtifact(file: string, bytes: Uint8Array): Promise<void>;
  onProgress?(progress: JobProgress): void;
}

export function summarize(steps: StepResult[]): RunSummaryCounts {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const s of steps) {
    if (s.status === "passed") passed++;
    else if (s.status === "skipped") skipped++;
    else failed++;
  }
  return { steps: steps.length, passed, failed, skipped };
}

/** The first failed step of a failed run, for its log line: "step 2 (get item): status: expected 200, got 500". */
function firstFailure(steps: StepResult[], mask: Masker | null): string | undefined {
  const f = steps.find((x) => x.status === "failed");
  if (!f) return undefined;
  const text = `step ${f.index + 1}${f.name ? ` (${f.name})` : ""}: ${f.message ?? "failed"}`;
  return mask ? mask(text) : text;
}

/** What went wrong in one attempt, kept with it: a retried attempt's steps are replaced by the next attempt's. */
function attemptMessage(result: { status: string; error: string | null; steps: StepResult[] }, mask: Masker | null): string | null {
  if (result.status === "passed") return null;
  const text = result.error ?? firstFailure(result.steps, null) ?? result.status;
  return mask ? mask(text) : text;
}

/** What a run stopped from outside (or by its timeout) comes to, and why, in the words its record keeps. */
export function abortedStatus(reason: RunAborted["reason"], timeoutMs: number): [FinalRunStatus, string] {
  if (reason === "timeout")
    return ["timed_out", `the run did not finish within its timeout of ${timeoutMs} ms: raise the automation's timeout_ms or make the steps faster`];
  if (reason === "cancelled") return ["cancelled", "cancelled by request"];
  if (reason === "runner_stopped") return ["error", "interrupted: the runner executing it stopped before the run finished: run it again"];
  if (reason === "taken_back") return ["error", "the run was taken back (its lease expired, or it was ended or claimed again elsewhere) and ended there"];
  return ["error", "interrupted by server shutdown before the run finished: run it again"];
}

/** Runs the job to its outcome; never throws (a bug becomes an `error` outcome that says so, secrets masked). */
export async function executeRun(job: RunJob, deps: ExecuteDeps): Promise<JobResult> {
  const masker = secretMasker(job.environment?.secrets ?? {});
  const attempts: RunAttempt[] = [...(job.priorAttempts ?? [])];
  let steps: StepResult[] = [];
  const result = (status: FinalRunStatus, error: string | null, final: StepResult[], artifacts: string[]): JobResult => ({
    status,
    error: error !== null && masker ? masker(error) : error,
    failure: status === "failed" ? firstFailure(final, masker) : undefined,
    summary: summarize(final),
    steps: masker ? maskDeep(final, masker) : final,
    artifacts,
    attempts: masker ? maskDeep(attempts, masker) : attempts,
  });
  try {
    return await execute(
      job,
      deps,
      masker,
      attempts,
      (s) => {
        steps = s;
        deps.onProgress?.({ steps: masker ? maskDeep(s, masker) : s, summary: summarize(s), attempts: masker ? maskDeep(attempts, masker) : attempts });
      },
      result,
    );
  } catch (e) {
    const message = masker ? masker(String((e as Error).message)) : String((e as Error).message);
    return result("error", `the run could not be executed (internal error: ${message})`, steps, []);
  }
}

async function execute(
  job: RunJob,
  deps: ExecuteDeps,
  masker: Masker | null,
  attempts: RunAttempt[],
  onStep: (steps: StepResult[]) => void,
  result: (status: FinalRunStatus, error: string | null, steps: StepResult[], artifacts: string[]) => JobResult,
): Promise<JobResult> {
  const spec = job.spec;
  if (!spec) return result("error", "the run's snapshot of the automation is unreadable: run the automation again", [], []);
  const checked = validateSteps(spec, job.specText);
  if ("problem" in checked) return result("error", checked.problem, [], []);
  if (job.environmentId && !job.environment) {
    return result("error", 'the run\'s environment no longer exists: run again with an existing environment ("environment": name or id)', [], []);
  }
  const unreadable = job.environment?.unreadableSecrets ?? [];
  if (unreadable.length > 0) {
    return result(
      "error",
      `the secrets ${unreadable.join(", ")} of the environment "${job.environment?.name}" cannot be decrypted with this server's secrets key: set them again (update_environment)`,
      [],
      [],
    );
  }
  const allowedHosts = job.environment?.secretHosts ?? null;
  const secretHosts = allowedHosts && masker ? { environment: job.environment?.name ?? "", allowed: allowedHosts, find: masker.find } : null;
  const timeoutMs = spec.timeout_ms > 0 ? spec.timeout_ms : deps.settings.defaultTimeoutMs;
  const deadline = performance.now() + timeoutMs;
  // The run's own signal: aborted by its timeout, or when the caller aborts (cancel, shutdown).
  const own = deps.controller !== undefined && deps.controller.signal === deps.signal ? deps.controller : null;
  const controller = own ?? new AbortController();
  const follow = () => controller.abort(deps.signal.reason);
  // With the caller's own controller there is nothing to follow: its signal is the run's.
  if (!own) {
    if (deps.signal.aborted) follow();
    else deps.signal.addEventListener("abort", follow, { once: true });
  }
  const timer = setTimeout(() => controller.abort(new RunAborted("timeout")), timeoutMs);
  const variables = job.environment?.variables ?? {};
  const secrets = job.environment?.secrets ?? {};
  const maxAttempts = Math.max(1, (spec.retries ?? 0) + 1);
  const artifacts: string[] = [];
  try {
    for (let attempt = attempts.length + 1; ; attempt++) {
      const vars = new Map<string, unknown>(Object.entries(variables));
      for (const [k, v] of Object.entries(secrets)) vars.set(k, v);
      const ctx: StepContext = {
        runId: job.id,
        vars,
        baseUrl: (vars.get("BASE_URL") as string | undefined) ?? null,
        signal: controller.signal,
        remainingMs: () => deadline - performance.now(),
        excerptBytes: deps.settings.excerptBytes,
        maxResponseBytes: deps.settings.maxResponseBytes,
        saveArtifact: deps.saveArtifact,
        artifactPrefix: attempt > 1 ? `attempt${attempt}-` : "",
        cookies: new RunCookies(),
        mask: masker,
        secretHosts,
      };
      const t0 = performance.now();
      let current: StepResult[] = [];
      try {
        const outcome = await runAttempt(checked.steps, ctx, {
          browser: deps.browser,
          onStep: (s) => {
            current = s;
            onStep(s);
          },
        });
        artifacts.push(...outcome.artifacts);
        attempts.push({
          attempt,
          status: outcome.status,
          error: outcome.error,
          message: attemptMessage(outcome, masker),
          duration_ms: Math.round(performance.now() - t0),
        });
        if (outcome.status === "passed" || attempt >= maxAttempts) return result(outcome.status, outcome.error, outcome.steps, artifacts);
        onStep([]);
      } catch (e) {
        if (!(e instanceof RunAborted)) throw e;
        const reached = e.partial?.steps ?? current;
        artifacts.push(...(e.partial?.artifacts ?? []));
        const [status, error] = abortedStatus(e.reason, timeoutMs);
        attempts.push({ attempt, status, error, message: error, duration_ms: Math.round(performance.now() - t0) });
        return result(status, error, reached, artifacts);
      }
    }
  } finally {
    clearTimeout(timer);
    if (!own) deps.signal.removeEventListener("abort", follow);
  }
}
