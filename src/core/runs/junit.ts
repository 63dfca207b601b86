// JUnit XML for runs and group runs: one testcase per automation, failures with expected and actual, and the
// attempts before the last one as Maven Surefire writes reruns (flakyFailure on a pass, rerunFailure on a failure).
import { setApart } from "../../manifest/records";
type StepLike = { name: string; status: string; message: string | null; duration_ms: number };
type AttemptLike = { attempt: number; status: string; error: string | null; message: string | null; duration_ms: number };
type RunLike = {
  id: string;
  automation_name: string;
  status: string;
  duration_ms: number | null;
  error: string | null;
  finished_at: string | null;
  created_at: string;
  attempts?: AttemptLike[];
  max_attempts?: number;
  steps?: StepLike[];
  /** Its automation was quarantined: a failure is reported as skipped ("quarantined …"), not as a failure. */
  quarantined?: boolean;
  /** The runner (svc runner) that executed it, if one did. */
  runner?: { id: string; name: string | null } | null;
};

/** The status of an automation of a sequential group run not queued yet (no run, so no run id), for its report. */
export const NOT_QUEUED_YET = "not_queued_yet";

/** The status JUnit reports: a failure set apart (quarantined) is reported as skipped. */
const reported = (run: RunLike) => (setApart(run) ? "quarantined" : run.status);

const escapeXml = (s: string) =>
  s
    .replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c)
    // Characters XML 1.0 cannot carry at all.
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "");

const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);

/**
 * The attempts before the last one that did not pass, as Surefire writes reruns: `flaky…` when the test passed
 * in the end, `rerun…` when it did not; `…Failure` for a failed attempt, `…Error` for one that errored.
 */
function earlierAttempts(run: RunLike): { failures: string; errors: string } {
  const attempts = run.attempts ?? [];
  const earlier = attempts.slice(0, -1).filter((a) => a.status !== "passed");
  const kind = run.status === "passed" ? "flaky" : "rerun";
  const of = run.max_attempts ?? attempts.length;
  const element = (a: AttemptLike, suffix: "Failure" | "Error") => {
    const message = a.message ?? a.error ?? a.status;
    const trace = `attempt ${a.attempt} of ${of} ${a.status} (${Math.round(a.duration_ms)} ms): ${message}`;
    const type = a.status === "failed" ? "assertion" : a.status;
    return `<${kind}${suffix} message="${escapeXml(message)}" type="${escapeXml(type)}"><stackTrace>${escapeXml(trace)}</stackTrace></${kind}${suffix}>`;
  };
  return {
    failures: earlier
      .filter((a) => a.status === "failed")
      .map((a) => element(a, "Failure"))
      .join(""),
    errors: earlier
      .filter((a) => a.status !== "failed")
      .map((a) => element(a, "Error"))
      .join(""),
  };
}

function testcase(run: RunLike, classname: string): string {
  const attrs = `name="${escapeXml(run.automation_name)}" classname="${escapeXml(classname)}" time="${seconds(run.duration_ms)}"`;
  const failedSteps = (run.steps ?? []).filter((s) => s.status === "failed" || s.status === "error");
  const detail = [...failedSteps.map((s) => `step "${s.name}" ${s.status}: ${s.message ?? ""}`), ...(run.error ? [run.error] : [])].join("\n");
  const firstLine = failedSteps[0]?.message ?? run.error ?? run.status;
  const stepLog = (run.steps ?? [])
    .map((s) => `${s.status.padEnd(7)} ${s.name} (${Math.round(s.duration_ms)} ms)${s.message ? ` — ${s.message}` : ""}`)
    .join("\n");
  // Surefire's order: failure, rerunFailure/flakyFailure, skipped, error, rerunError/flakyError, system-out.
  const reruns = earlierAttempts(run);
  let body = "";
  if (reported(run) === "quarantined") body = `<skipped message="${escapeXml(`quarantined (${run.status}): ${firstLine}`)}"/>`;
  else if (run.status === "failed")
    body = `<failure message="${escapeXml(firstLine)}" type="assertion">${escapeXml(detail)}</failure>${reruns.failures}${reruns.errors}`;
  else if (run.status === "error" || run.status === "timed_out")
    body = `${reruns.failures}<error message="${escapeXml(firstLine)}" type="${run.status}">${escapeXml(detail)}</error>${reruns.errors}`;
  // Cancelled: no verdict, so skipped (as Surefire reports a test that did not run), with why: a person's cancel,
  // or a sequential group run that stopped before it (stop_on_failure), which the CI reader needs to see.
  else if (run.status === "cancelled") body = `<skipped message="${escapeXml(run.error ? `cancelled: ${run.error}` : "cancelled")}"/>`;
  // Not ended (the report of a group run still going, as `--junit` writes when its watch stops early): no verdict
  // yet, so skipped rather than an error, with the run to look up later.
  else if (run.status === "queued" || run.status === "running")
    body = `<skipped message="${escapeXml(`still ${run.status} when this report was made (run ${run.id})`)}"/>`;
  // A sequential group run's automation whose turn has not come: it has no run yet.
  else if (run.status === NOT_QUEUED_YET)
    body = `<skipped message="not queued yet when this report was made (a sequential group run queues each automation when the one before it has ended)"/>`;
  else body = `${reruns.failures}${reruns.errors}`;
  const attempts = run.attempts ?? [];
  const passedOn =
    run.status === "passed" && attempts.length > 1 ? `flaky: passed on attempt ${attempts.length} of ${run.max_attempts ?? attempts.length}\n` : "";
  // Where it ran, when a runner (svc runner) executed it: a check that fails on one network only says which.
  const where = run.runner ? ` on runner ${run.runner.name ?? run.runner.id}` : "";
  const out = stepLog ? `<system-out>${escapeXml(`run ${run.id}${where}\n${passedOn}${stepLog}`)}</system-out>` : "";
  return `    <testcase ${attrs}>${body}${out}</testcase>`;
}

function suite(name: string, id: string, runs: RunLike[], timestamp: string): string {
  const count = (pred: (r: RunLike) => boolean) => runs.filter(pred).length;
  const time = runs.reduce((a, r) => a + (r.duration_ms ?? 0), 0);
  return [
    `  <testsuite name="${escapeXml(name)}" id="${escapeXml(id)}" tests="${runs.length}" failures="${count((r) => reported(r) === "failed")}" ` +
      `errors="${count((r) => reported(r) === "error" || reported(r) === "timed_out")}" skipped="${count((r) => ["cancelled", "queued", "running", "quarantined", NOT_QUEUED_YET].includes(reported(r)))}" ` +
      `time="${seconds(time)}" timestamp="${escapeXml(timestamp)}">`,
    ...runs.map((r) => testcase(r, name)),
    "  </testsuite>",
  ].join("\n");
}

function document(suiteXml: string, name: string, runs: RunLike[]): string {
  const count = (pred: (r: RunLike) => boolean) => runs.filter(pred).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(name)}" tests="${runs.length}" failures="${count((r) => reported(r) === "failed")}" errors="${count((r) => reported(r) === "error" || reported(r) === "timed_out")}">`,
    suiteXml,
    "</testsuites>",
    "",
  ].join("\n");
}

export function runJunit(run: RunLike): string {
  return document(suite(run.automation_name, run.id, [run], run.created_at), "svc", [run]);
}

export function groupRunJunit(groupRun: { id: string; group_name: string; created_at: string; runs?: RunLike[] }): string {
  const runs = groupRun.runs ?? [];
  return document(suite(groupRun.group_name, groupRun.id, runs, groupRun.created_at), "svc", runs);
}
