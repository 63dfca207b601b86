// The runner protocol: what `svc runner` and the server say to each other under /api/v1/runner (bearer runner
// token). Declared once here for both sides; docs/runners.md describes it.
import { z } from "zod";
import { Name, RunnerLabel } from "./define";
import { RunSummary, StepResult } from "./records";

/** Bumped on any change a runner of the previous protocol would misread; the server refuses other protocols. */
export const RUNNER_PROTOCOL = 1;
export const RUNNER_PREFIX = "/api/v1/runner";
/** The longest a claim waits for work, and the longest a heartbeat waits for a cancellation. */
export const CLAIM_WAIT_MAX_MS = 25_000;
/** Artifacts (screenshots) a runner uploads are at most this large. */
export const RUNNER_ARTIFACT_MAX_BYTES = 32 * 1024 * 1024;
/** A runner's JSON bodies (results with response excerpts) are at most this large. */
export const RUNNER_BODY_MAX_BYTES = 64 * 1024 * 1024;
/** Artifact names as the steps make them (`01-home.png`, `attempt2-01-home.png`). */
export const ARTIFACT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/**
 * Every request of a `svc runner` process names the process (a random id it makes when it starts): a token is
 * held by one process at a time, so two processes started with one token do not overwrite each other.
 */
export const RUNNER_INSTANCE_HEADER = "x-svc-runner-instance";
export const RunnerInstance = z.string().regex(/^[A-Za-z0-9-]{8,64}$/);

export const Hello = z.strictObject({
  protocol: z.number().int(),
  version: z.string().max(100),
  /** The name the runner goes by from this hello on (`svc runner --name`, SVC_RUNNER_NAME); absent: it keeps its name. */
  name: Name.optional(),
  labels: z.array(RunnerLabel).max(20).default([]),
  capabilities: z.strictObject({ browser: z.boolean() }),
});

const RunRef = z.strictObject({ id: z.string().min(1).max(200), claim: z.number().int() });

export const Claim = z.strictObject({
  slots: z.number().int().min(1).max(256),
  wait_ms: z.number().int().min(0).max(CLAIM_WAIT_MAX_MS).default(0),
});

export const Start = z.strictObject({ runs: z.array(RunRef).max(256) });

const Attempt = z.strictObject({
  attempt: z.number().int(),
  status: z.enum(["passed", "failed", "error", "timed_out", "cancelled"]),
  error: z.string().nullable(),
  message: z.string().nullable(),
  duration_ms: z.number(),
});

export const Progress = z.strictObject({ steps: z.array(StepResult), summary: RunSummary, attempts: z.array(Attempt) });

export const Heartbeat = z.strictObject({
  runs: z.array(RunRef.extend({ progress: Progress.optional() })).max(256),
  wait_ms: z.number().int().min(0).max(CLAIM_WAIT_MAX_MS).default(0),
});

export const JobResultBody = z.strictObject({
  status: z.enum(["passed", "failed", "error", "timed_out", "cancelled"]),
  error: z.string().nullable(),
  failure: z.string().optional(),
  summary: RunSummary,
  steps: z.array(StepResult),
  artifacts: z.array(z.string().regex(ARTIFACT_NAME)).max(1000),
  attempts: z.array(Attempt),
});

export const Finish = z.strictObject({ runs: z.array(RunRef.extend({ result: JobResultBody })).max(256) });

export const Release = z.strictObject({ runs: z.array(RunRef).max(256) });

export type HelloBody = z.input<typeof Hello>;
export interface HelloAnswer {
  runner: { id: string; name: string; labels: string[]; scope: "workspace" | "server" };
  server_version: string;
  lease_ms: number;
  /** How long a heartbeat may wait: a third of the lease, so one late answer never lets it expire. */
  heartbeat_wait_ms: number;
  settings: { default_timeout_ms: number; response_excerpt_bytes: number; max_response_bytes: number };
}
export interface ClaimedJob {
  id: string;
  claim: number;
  automation_id: string;
  automation_name: string;
  spec_text: string;
  environment_id: string | null;
  environment: {
    name: string;
    variables: Record<string, string>;
    secrets: Record<string, string>;
    unreadableSecrets: string[];
    secretHosts: string[] | null;
  } | null;
  /** Attempts made before this claim (a runner was lost executing it): the run keeps them first, and they count
   * against its retries. Absent for a run never begun. */
  prior_attempts?: z.output<typeof Attempt>[];
}
export interface HeartbeatAnswer {
  /** Runs it holds that were cancelled: stop them (and still finish them, to keep what they reached). */
  cancelled: string[];
  /** Runs no longer its own (the lease expired, or revoked): stop them; their results are not taken. */
  lost: string[];
}
