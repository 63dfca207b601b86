// The result of one step as a run records it (the Run record's StepResult), and the run context steps share.
import type { RunCookies } from "./http-fetch";
import type { AssertionResult } from "./assertions";
import type { Variables } from "./interpolation";
import type { SecretHosts } from "./secret-hosts";
import type { Masker } from "./secret-masking";

export type StepStatus = "passed" | "failed" | "error" | "skipped";

export interface StepResult {
  index: number;
  name: string;
  status: StepStatus;
  duration_ms: number;
  message: string | null;
  assertions?: AssertionResult[];
  request?: { method: string; url: string; headers?: Record<string, string>; body?: string };
  response?: { status: number; headers: Record<string, string>; body: string; truncated: boolean };
  artifacts?: string[];
}

/** What every step of one attempt shares. */
export interface StepContext {
  runId: string;
  vars: Variables;
  baseUrl: string | null;
  signal: AbortSignal;
  /** Milliseconds left before the run's overall timeout. */
  remainingMs(): number;
  excerptBytes: number;
  /** Responses larger than this are not read to the end (`runner.max_response_bytes`). */
  maxResponseBytes: number;
  /** Keeps an artifact of the run (a screenshot) under a file name; where it goes is the executor's business. */
  saveArtifact(file: string, bytes: Uint8Array): Promise<void>;
  /** Prefix for artifact names, so retried attempts do not overwrite the first one's files. */
  artifactPrefix: string;
  /** The http steps' cookies: one jar per attempt, never shared with another run. */
  cookies: RunCookies;
  /** Hides the run's secrets in an excerpt as it is cut (a secret cut in two is hidden too); null without secrets. */
  mask: Masker | null;
  /** In a protected environment: where its secrets may be sent (see secret-hosts.ts); null otherwise. */
  secretHosts: SecretHosts | null;
}

/** A step that could not run or did not pass, with words for the user. */
export class StepFailure extends Error {
  constructor(
    readonly status: "failed" | "error",
    message: string,
  ) {
    super(message);
  }
}

/** Joins a relative URL to BASE_URL; the base's own path is kept (/api + /items → /api/items). */
export function resolveUrl(url: string, baseUrl: string | null): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return url;
  if (!baseUrl) {
    throw new StepFailure(
      "error",
      `"${url}" is a relative URL but the run's environment has no BASE_URL variable: add BASE_URL to the environment, or run with an environment that has one`,
    );
  }
  // The usual case, a path with one leading slash and a base without a trailing one, needs no rewriting.
  if (url.charCodeAt(0) === 47 && url.charCodeAt(1) !== 47 && baseUrl.charCodeAt(baseUrl.length - 1) !== 47) return baseUrl + url;
  return `${baseUrl.replace(/\/+$/, "")}/${url.replace(/^\/+/, "")}`;
}
