// Run-engine test fixtures over the real API: a project with an environment, automations, and waiting for runs.
import { startTestServer, type TestServer } from "./server";

export interface RunRecord {
  id: string;
  status: string;
  error: string | null;
  duration_ms: number | null;
  summary: { steps: number; passed: number; failed: number; skipped: number };
  attempts: { attempt: number; status: string; error: string | null; message?: string | null; duration_ms: number }[];
  steps: {
    index: number;
    name: string;
    status: string;
    duration_ms: number;
    message: string | null;
    assertions?: { assertion: string; passed: boolean; message: string; expected?: unknown; actual?: unknown }[];
    request?: { method: string; url: string; headers?: Record<string, string>; body?: string };
    response?: { status: number; headers: Record<string, string>; body: string; truncated: boolean };
    artifacts?: string[];
  }[];
  artifacts: string[];
  /** The runner that executed it; null for the server's own engine. */
  runner: { id: string; name: string | null } | null;
}

export async function json<T>(res: Response, status = 200): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected HTTP ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A project named after the test with one environment whose BASE_URL is the target. */
export async function projectWithEnv(s: TestServer, name: string, variables: Record<string, string>, secrets: Record<string, string> = {}) {
  const project = await json<{ id: string; slug: string }>(await s.call("POST", "/projects", { name }), 201);
  const env = await json<{ id: string }>(await s.call("POST", `/projects/${project.slug}/environments`, { name: "test", variables, secrets }), 201);
  return { project: project.slug, envId: env.id };
}

/** A server for run-engine tests: no rate limit, `concurrency` workers, and a project whose environment's
 * BASE_URL is `baseUrl`. */
export async function runnerServer(name: string, baseUrl: string, concurrency: number): Promise<{ s: TestServer; project: string }> {
  const s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency } });
  const { project } = await projectWithEnv(s, name, { BASE_URL: baseUrl });
  return { s, project };
}

export async function createAutomation(s: TestServer, project: string, body: Record<string, unknown>): Promise<string> {
  const a = await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations`, body), 201);
  return a.id;
}

export async function startRun(s: TestServer, project: string, automationId: string, body: Record<string, unknown> = {}): Promise<string> {
  const r = await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations/${automationId}/run`, body), 202);
  return r.id;
}

export async function getRun(s: TestServer, project: string, runId: string): Promise<RunRecord> {
  return json<RunRecord>(await s.call("GET", `/projects/${project}/runs/${runId}`));
}

const TERMINAL = ["passed", "failed", "error", "timed_out", "cancelled"];

export async function waitForRun(s: TestServer, project: string, runId: string, timeoutMs = 30_000): Promise<RunRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await getRun(s, project, runId);
    if (TERMINAL.includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.status} after ${timeoutMs} ms`);
    await Bun.sleep(25);
  }
}

/** Creates the automation, runs it and waits for the end. */
export async function runToEnd(s: TestServer, project: string, body: Record<string, unknown>, runBody: Record<string, unknown> = {}): Promise<RunRecord> {
  const id = await createAutomation(s, project, body);
  // Tests start many of these at once: a run may wait its turn behind the others on a loaded machine, which is
  // not what they check, so the wait is long (bounds a test asserts are timed from the run's own record).
  return waitForRun(s, project, await startRun(s, project, id, runBody), 120_000);
}
