// One run: per-step results with expected and actual values, request/response excerpts, inline screenshots,
// live while it runs, cancel, and the JUnit download.
import { readableStepName } from "../../manifest/step-labels";
import { useRef, useState } from "preact/hooks";
import { call, enc, operationHref } from "../api";
import { type DiffLine, lineDiff } from "../diff";
import { useAction, useLoad } from "../hooks";
import type { Automation, Run, StepResult } from "../types";
import { Badge, Card, ErrorNote, Loading, duration, when } from "../ui";
import { navigate } from "../router";
import { ProjectFrame } from "./project-frame";
import { OriginFacts, useRunEnvironment } from "./run-environment";
import { passedOn, RunStatusBadges } from "./runs";

const IMAGE = /\.(png|jpe?g|webp|gif)$/i;

/**
 * The actual value beside its expectation. A JSON path's value keeps its type, so a string is quoted as the
 * expectation quotes one: the string "7" must not read as the number 7 expected. A text subject (body, header)
 * is shown as it came, as is a long value the run cut short (it ends in "…" and is no longer the value itself).
 */
function show(a: AssertionRecord): string {
  const v = a.actual;
  if (v === undefined) return "—";
  if (typeof v !== "string") return JSON.stringify(v);
  return a.subject?.startsWith("$") && !v.endsWith("…") ? JSON.stringify(v) : v;
}

type AssertionRecord = NonNullable<StepResult["assertions"]>[number];

/**
 * "2 passed · 1 failed · 1 error · 0 skipped", counted from the run's steps: its summary counts a step that ended in
 * an error (its URL could not be reached, say) as failed, though no expectation of it failed.
 */
function stepCounts(run: Run): string {
  const steps = run.steps;
  if (!steps) return `${run.summary.passed} passed · ${run.summary.failed} failed · ${run.summary.skipped} skipped`;
  const count = (status: StepResult["status"]) => steps.filter((s) => s.status === status).length;
  // A cancelled or timed-out run's step in error is the one it was stopped at, as the runs list says: not a fault.
  const stopped = run.status === "cancelled" || run.status === "timed_out";
  const errors = count("error");
  const errorPart =
    errors === 0 ? [] : stopped ? [`stopped at step ${count("passed") + count("failed") + 1}`] : [`${errors} ${errors === 1 ? "error" : "errors"}`];
  return [`${count("passed")} passed`, `${count("failed")} failed`, ...errorPart, `${count("skipped")} skipped`].join(" · ");
}

/** The expectation as written: subject, operator and value (`$.price < 3`, `status == 200`); older records say it in `assertion`. */
function expectation(a: AssertionRecord): string {
  if (!a.subject || !a.operator) return a.assertion;
  if (a.operator === "exists" || a.operator === "does not exist" || a.operator === "matches schema") return `${a.subject} ${a.operator}`;
  if (a.operator === "matches") return `${a.subject} matches /${String(a.expected)}/`;
  return `${a.subject} ${a.operator} ${JSON.stringify(a.expected)}`;
}

/** A failed equality between two JSON documents (objects or arrays) is shown as a line diff of their indented forms. */
function equalityDiff(a: AssertionRecord): DiffLine[] | null {
  if (a.passed || a.operator !== "==" || a.expected === null || a.actual === null) return null;
  if (typeof a.expected !== "object" || typeof a.actual !== "object") return null;
  return lineDiff(JSON.stringify(a.expected, null, 2), JSON.stringify(a.actual, null, 2));
}

function JsonDiff({ lines }: { lines: DiffLine[] }) {
  return (
    // Scrolls when long: focusable, so it scrolls from the keyboard too.
    <pre class="excerpt diff" data-testid="json-diff" aria-label="Expected (−) and actual (+)" tabIndex={0}>
      {lines.map((l, i) => (
        <span key={i} class={`diff-${l.kind}`}>
          {l.kind === "removed" ? "- " : l.kind === "added" ? "+ " : "  "}
          {l.text}
        </span>
      ))}
    </pre>
  );
}

function artifactUrl(project: string, runId: string, name: string): string {
  return operationHref("getRunArtifact", { project, runId, name });
}

function AssertionTable({ assertions }: { assertions: AssertionRecord[] }) {
  return (
    <div class="table-wrap">
      <table class="compact">
        <thead>
          <tr>
            <th>
              <span class="visually-hidden">Result</span>
            </th>
            <th>Expected</th>
            <th>Actual</th>
          </tr>
        </thead>
        <tbody>
          {assertions.map((a, i) => {
            const diff = equalityDiff(a);
            return (
              <tr key={i} class={a.passed ? "" : "row-failed"}>
                <td data-label="Result">
                  {/* The mark is for the eye; a screen reader hears the word. */}
                  <span aria-hidden="true">{a.passed ? "✓" : "✗"}</span>
                  <span class="visually-hidden">{a.passed ? "passed" : "failed"}</span>
                </td>
                <td data-label="Expected">
                  <code>{expectation(a)}</code>
                </td>
                <td data-label="Actual">
                  <code>{show(a)}</code>
                  {diff && <JsonDiff lines={diff} />}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The request and response excerpt, folded away; its text is only made once opened (a 500-step run stays quick). */
function Exchange({ step }: { step: StepResult }) {
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>Request and response</summary>
      {open && step.request && (
        <pre class="excerpt" tabIndex={0}>{`${step.request.method} ${step.request.url}\n${Object.entries(step.request.headers ?? {})
          .map(([k, v]) => `${k}: ${v}`)
          .join("\n")}${step.request.body ? `\n\n${step.request.body}` : ""}`}</pre>
      )}
      {open && step.response && (
        // The body first (what is read most), then the headers.
        <pre
          class="excerpt"
          tabIndex={0}
        >{`${step.response.status}\n\n${readableBody(step.response)}${step.response.truncated ? "\n… (truncated)" : ""}\n\n${Object.entries(
          step.response.headers,
        )
          .map(([k, v]) => `${k}: ${v}`)
          .join("\n")}`}</pre>
      )}
    </details>
  );
}

function StepCard({ project, run, step }: { project: string; run: Run; step: StepResult }) {
  return (
    <li class={`step step-${step.status}`} data-step={step.index}>
      <div class="step-head">
        <Badge status={step.status} />
        <strong>
          {step.index + 1}. {readableStepName(step.name)}
        </strong>
        <span class="muted">{duration(step.duration_ms)}</span>
      </div>
      {step.message && <p class="step-message">{step.message}</p>}
      {step.assertions && step.assertions.length > 0 && <AssertionTable assertions={step.assertions} />}
      {(step.request || step.response) && <Exchange step={step} />}
      {step.artifacts
        ?.filter((n) => IMAGE.test(n))
        .map((n) => (
          <a key={n} href={artifactUrl(project, run.id, n)} target="_blank" rel="noreferrer">
            <img class="shot" src={artifactUrl(project, run.id, n)} alt={`Screenshot ${n}`} loading="lazy" />
          </a>
        ))}
    </li>
  );
}

/** A step's name as the automation gives it (its own name, else what it does). */
function stepName(step: Automation["steps"][number] | undefined): string | null {
  if (!step) return null;
  if (step.name) return step.name;
  if ("request" in step) return `${step.request.method} ${step.request.url}`;
  return Object.keys(step)[0] ?? null;
}

/** The step a running run is at: the one after the last result recorded so far, named from its automation. */
function CurrentStep({ index, name }: { index: number; name: string | null }) {
  return (
    <li class="step step-running" data-step={index} data-testid="current-step" aria-current="step">
      <div class="step-head">
        <Badge status="running" />
        <strong>
          {index + 1}. {name ?? "next step"}
        </strong>
      </div>
    </li>
  );
}

/** A complete JSON response body indented for reading; anything else (or a truncated excerpt) as it came. */
function readableBody(r: { headers: Record<string, string>; body: string; truncated: boolean }): string {
  const type = Object.entries(r.headers).find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "";
  if (r.truncated || !/json/i.test(type)) return r.body;
  try {
    return JSON.stringify(JSON.parse(r.body), null, 2);
  } catch {
    return r.body;
  }
}

export function RunPage({ project, runId }: { project: string; runId: string }) {
  const run = useLoad(
    (wait) => call("getRun", { project, runId, wait }),
    `run:${project}:${runId}`,
    (r) => (r.status === "queued" || r.status === "running" ? 1000 : 0),
    true,
    // A run stopped while it ran (cancelled, timed out) gets the results of its stopped steps a moment after its
    // status turned final: the page reads it again until it stops changing.
    (r) => ((r.status === "cancelled" || r.status === "timed_out") && r.started_at !== null ? r.updated_at : null),
  );
  const a = useAction();
  const r = run.data;
  // Cancelling removes its button: the focus moves to the status it changed, not back to the top of the page.
  const statusRef = useRef<HTMLElement>(null);
  // "Run again" offers the environment picker of every run action; its default is this run's environment.
  const env = useRunEnvironment(project, r ? [{ environment_id: r.environment_id }] : [], { label: "as this run", id: r?.environment_id ?? null });
  const running = r?.status === "running";
  // The names of the steps not reached yet come from the automation (loaded once the run is seen running).
  const automation = useLoad(
    () => (running && r ? call("getAutomation", { project, automationId: r.automation_id }) : Promise.resolve(null)),
    `run-automation:${running ? (r?.automation_id ?? "") : ""}`,
  );
  const results = r?.steps ?? [];
  const planned = automation.data?.steps ?? [];
  const current = running && results.length < Math.max(planned.length, 1) ? results.length : null;
  const stepArtifacts = new Set(r?.steps?.flatMap((s) => s.artifacts ?? []) ?? []);
  const other = (r?.artifacts ?? []).filter((n) => !stepArtifacts.has(n));
  return (
    <ProjectFrame project={project} section="runs" title={r ? `Run of ${r.automation_name}` : "Run"}>
      {run.loading && <Loading what="the run" />}
      <ErrorNote message={run.error} />
      {r && (
        <>
          <Card
            level={1}
            title={
              <>
                Run of <a href={`#/p/${enc(project)}/automations/${r.automation_id}`}>{r.automation_name}</a>
              </>
            }
            actions={
              <>
                {(r.status === "queued" || r.status === "running") && (
                  <button
                    type="button"
                    class="btn"
                    disabled={a.busy}
                    onClick={() =>
                      void a.run(async () => {
                        await call("cancelRun", { project, runId: r.id });
                        await run.reload();
                        statusRef.current?.focus();
                      })
                    }
                  >
                    Cancel run
                  </button>
                )}
                {r.status !== "queued" && r.status !== "running" && env.picker}
                {r.status !== "queued" && r.status !== "running" && (
                  <button
                    type="button"
                    class="btn"
                    disabled={a.busy || !env.ready}
                    onClick={() =>
                      void a.run(async () => {
                        env.remember();
                        // The same automation, in the environment chosen beside the button (by default this run's); its page follows the new run.
                        const next = await call("runAutomation", {
                          project,
                          automationId: r.automation_id,
                          environment: env.environment ?? r.environment_id ?? undefined,
                        });
                        navigate(`/p/${enc(project)}/runs/${next.id}`);
                      })
                    }
                  >
                    Run again
                  </button>
                )}
                <a class="btn" href={operationHref("getRunJunit", { project, runId: r.id })} download={`${r.id}.xml`}>
                  JUnit XML
                </a>
              </>
            }
          >
            <dl class="facts">
              <div>
                <dt>Status</dt>
                {/* Announced when it changes: a run followed live ends without a reload. */}
                <dd data-testid="run-status" ref={statusRef} tabIndex={-1} aria-live="polite" aria-atomic="true">
                  <RunStatusBadges run={r} />
                  {r.flaky && <span class="muted"> {passedOn(r)}</span>}
                </dd>
              </div>
              <div>
                <dt>Started</dt>
                <dd>{when(r.started_at)}</dd>
              </div>
              <div>
                <dt>Duration</dt>
                <dd>{duration(r.duration_ms)}</dd>
              </div>
              <div>
                <dt>Steps</dt>
                <dd data-testid="run-step-counts">{stepCounts(r)}</dd>
              </div>
              <OriginFacts project={project} record={r} />
              {r.runner && (
                <div>
                  <dt>Runner</dt>
                  <dd data-testid="run-runner">
                    <a href={`#/p/${enc(project)}/runs?runner=${encodeURIComponent(r.runner.id)}`} title="The runs this runner executed">
                      {r.runner.name ?? `${r.runner.id} (deleted)`}
                    </a>
                  </dd>
                </div>
              )}
              {r.group_run_id && (
                <div>
                  <dt>Group run</dt>
                  <dd>
                    <a href={`#/p/${enc(project)}/group-runs/${r.group_run_id}`}>{r.group_run_id}</a>
                  </dd>
                </div>
              )}
            </dl>
            {r.waiting_for && (
              <div class="note note-warn" data-testid="run-waiting">
                {r.waiting_for}
              </div>
            )}
            {r.error && <div class="note note-error">{r.error}</div>}
            {r.attempts.length > 1 && (
              <div data-testid="run-attempts">
                <h3>Attempts</h3>
                <ol class="attempts">
                  {r.attempts.map((x) => (
                    <li key={x.attempt}>
                      <Badge status={x.status} /> attempt {x.attempt} of {r.max_attempts} <span class="muted">{duration(x.duration_ms)}</span>
                      {x.message && <p class="step-message">{x.message}</p>}
                    </li>
                  ))}
                </ol>
              </div>
            )}
            <ErrorNote message={a.error} />
          </Card>
          <Card title="Steps">
            {results.length === 0 && current === null ? (
              <p class="muted">{r.status === "queued" ? "Waiting for a worker…" : "No step results."}</p>
            ) : (
              <ol class="steps">
                {results.map((s) => (
                  <StepCard key={s.index} project={project} run={r} step={s} />
                ))}
                {current !== null && <CurrentStep index={current} name={stepName(planned[current])} />}
              </ol>
            )}
          </Card>
          {other.length > 0 && (
            <Card title="Artifacts">
              <div class="grid">
                {other.map((n) =>
                  IMAGE.test(n) ? (
                    <img key={n} class="shot" src={artifactUrl(project, r.id, n)} alt={`Screenshot ${n}`} />
                  ) : (
                    <a key={n} href={artifactUrl(project, r.id, n)}>
                      {n}
                    </a>
                  ),
                )}
              </div>
            </Card>
          )}
        </>
      )}
    </ProjectFrame>
  );
}
