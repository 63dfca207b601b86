// One run: per-step results with expected and actual values, request/response excerpts, inline screenshots,
// live while it runs, cancel, and the JUnit download.
import { call, enc, operationHref } from "../api";
import { useAction, useLoad } from "../hooks";
import type { Run, StepResult } from "../types";
import { Badge, Card, ErrorNote, Loading, duration, when } from "../ui";
import { navigate } from "../router";
import { ProjectFrame } from "./project-frame";
import { OriginFacts } from "./run-environment";
import { passedOn, RunStatusBadges } from "./runs";

const IMAGE = /\.(png|jpe?g|webp|gif)$/i;

function show(v: unknown): string {
  if (v === undefined) return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

function artifactUrl(project: string, runId: string, name: string): string {
  return operationHref("getRunArtifact", { project, runId, name });
}

function StepCard({ project, run, step }: { project: string; run: Run; step: StepResult }) {
  return (
    <li class={`step step-${step.status}`} data-step={step.index}>
      <div class="step-head">
        <Badge status={step.status} />
        <strong>
          {step.index + 1}. {step.name}
        </strong>
        <span class="muted">{duration(step.duration_ms)}</span>
      </div>
      {step.message && <p class="step-message">{step.message}</p>}
      {step.assertions && step.assertions.length > 0 && (
        <div class="table-wrap">
          <table class="compact">
            <thead>
              <tr>
                <th>
                  <span class="visually-hidden">Result</span>
                </th>
                <th>Assertion</th>
                <th>Expected</th>
                <th>Actual</th>
              </tr>
            </thead>
            <tbody>
              {step.assertions.map((a, i) => (
                <tr key={i} class={a.passed ? "" : "row-failed"}>
                  <td data-label="Result">{a.passed ? "✓" : "✗"}</td>
                  <td data-label="Assertion">
                    <code>{a.assertion}</code>
                  </td>
                  <td data-label="Expected">
                    <code>{show(a.expected)}</code>
                  </td>
                  <td data-label="Actual">
                    <code>{show(a.actual)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {(step.request || step.response) && (
        <details>
          <summary>Request and response</summary>
          {step.request && (
            <pre class="excerpt">{`${step.request.method} ${step.request.url}\n${Object.entries(step.request.headers ?? {})
              .map(([k, v]) => `${k}: ${v}`)
              .join("\n")}${step.request.body ? `\n\n${step.request.body}` : ""}`}</pre>
          )}
          {step.response && (
            <pre class="excerpt">{`${step.response.status}\n${Object.entries(step.response.headers)
              .map(([k, v]) => `${k}: ${v}`)
              .join("\n")}\n\n${readableBody(step.response)}${step.response.truncated ? "\n… (truncated)" : ""}`}</pre>
          )}
        </details>
      )}
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
  );
  const a = useAction();
  const r = run.data;
  const stepArtifacts = new Set(r?.steps?.flatMap((s) => s.artifacts ?? []) ?? []);
  const other = (r?.artifacts ?? []).filter((n) => !stepArtifacts.has(n));
  return (
    <ProjectFrame project={project} section="runs">
      {run.loading && <Loading what="the run" />}
      <ErrorNote message={run.error} />
      {r && (
        <>
          <Card
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
                      })
                    }
                  >
                    Cancel run
                  </button>
                )}
                {r.status !== "queued" && r.status !== "running" && (
                  <button
                    type="button"
                    class="btn"
                    disabled={a.busy}
                    onClick={() =>
                      void a.run(async () => {
                        // The same automation in the same environment; its page follows the new run.
                        const next = await call("runAutomation", { project, automationId: r.automation_id, environment: r.environment_id ?? undefined });
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
                <dd data-testid="run-status">
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
                <dd>
                  {r.summary.passed} passed · {r.summary.failed} failed · {r.summary.skipped} skipped
                </dd>
              </div>
              <OriginFacts project={project} record={r} />
              {r.group_run_id && (
                <div>
                  <dt>Group run</dt>
                  <dd>
                    <a href={`#/p/${enc(project)}/group-runs/${r.group_run_id}`}>{r.group_run_id}</a>
                  </dd>
                </div>
              )}
            </dl>
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
            {(r.steps ?? []).length === 0 ? (
              <p class="muted">{r.status === "queued" ? "Waiting for a worker…" : "No step results."}</p>
            ) : (
              <ol class="steps">
                {(r.steps ?? []).map((s) => (
                  <StepCard key={s.index} project={project} run={r} step={s} />
                ))}
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
