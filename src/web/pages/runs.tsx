// Run lists: a project's runs with status badges and durations, filtered by status, live while any is active.
import { useRef } from "preact/hooks";
import { RunStatus, setApart } from "../../manifest/records";
import { allPages, call, chosen, enc } from "../api";
import { LIST_POLL_MS, useLoad } from "../hooks";
import type { Run } from "../types";
import { ago, Badge, duration, Empty, ErrorNote, Field, inputValue, Loading, when } from "../ui";
import { setHashQuery, useHashQuery } from "../router";
import { ProjectFrame } from "./project-frame";
import { StartedBy, useEnvironmentNames } from "./run-environment";

const active = (r: Run) => r.status === "queued" || r.status === "running";

type Attempted = Pick<Run, "status" | "flaky" | "attempts" | "max_attempts" | "quarantined">;

/** "Passed on attempt 2 of 3", for a run that passed only after a failed attempt. */
export const passedOn = (run: Attempted) => `Passed on attempt ${run.attempts.length} of ${run.max_attempts}`;

/**
 * A run's status badge, and beside it a "flaky" badge when it passed only after a failed attempt, or a
 * "quarantined" one when its failure does not count against its group run. Held in one inline block: inside a link,
 * the space between two badges is not underlined.
 */
export function RunStatusBadges({ run }: { run: Attempted }) {
  return (
    <span class="badges">
      <Badge status={run.status} />
      {setApart(run) && (
        <>
          {" "}
          <span class="badge badge-quarantined" title="Its automation is quarantined: this failure does not fail its group run or the CLI">
            quarantined
          </span>
        </>
      )}
      {run.flaky && (
        <>
          {" "}
          <span class="badge badge-flaky" title={passedOn(run)}>
            flaky
          </span>
        </>
      )}
    </span>
  );
}

/**
 * A run's steps in a list. While a run is active its summary counts only the steps reached so far (a queued run's is
 * 0/0): it says how far it got, not a total that reads as complete. A run stops at its first step that did not pass,
 * so an ended run has at most one: an error in a run that ended in an error (as its page counts it), a failure in a
 * failed one, and where it was stopped in a cancelled or timed-out one.
 */
function StepCounts({ run }: { run: Run }) {
  const { passed, steps, failed } = run.summary;
  if (run.status === "queued") return <span class="muted">not started</span>;
  if (run.status === "running") return <span class="muted">{passed} passed so far…</span>;
  if (failed === 0) return <>{`${passed}/${steps}`}</>;
  const bad =
    run.status === "cancelled" || run.status === "timed_out"
      ? `stopped at step ${passed + 1}`
      : run.status === "error"
        ? `${failed} ${failed === 1 ? "error" : "errors"}`
        : `${failed} failed`;
  return <>{`${passed}/${steps} · ${bad}`}</>;
}

/**
 * Runs as a table; `compact` (for a side card) keeps status, automation, a relative start time and duration.
 * Without `automationColumn` (runs of one automation, on its page) the automation is not named on every row.
 */
export function RunTable({
  project,
  runs,
  compact = false,
  automationColumn = true,
}: {
  project: string;
  runs: Run[];
  compact?: boolean;
  automationColumn?: boolean;
}) {
  const envs = useEnvironmentNames(project);
  if (runs.length === 0) return <Empty>No runs yet.</Empty>;
  // Where runs ran, once runners (svc runner) executed some of those listed.
  const byRunners = !compact && runs.some((r) => r.runner);
  return (
    <div class="table-wrap">
      <table class={compact ? "compact" : undefined}>
        <thead>
          <tr>
            <th>Status</th>
            {automationColumn && <th>Automation</th>}
            <th>Started</th>
            <th>Duration</th>
            {!compact && (
              <>
                <th>Steps</th>
                <th>Environment</th>
                <th>Started by</th>
                {byRunners && <th>Runner</th>}
              </>
            )}
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id} data-run-id={r.id}>
              <td data-label="Status">
                <a href={`#/p/${enc(project)}/runs/${r.id}`}>
                  <RunStatusBadges run={r} />
                </a>
              </td>
              {automationColumn && (
                <td data-label="Automation">
                  <a href={`#/p/${enc(project)}/runs/${r.id}`}>{r.automation_name}</a>
                </td>
              )}
              <td data-label="Started" class="nowrap" title={compact ? when(r.started_at ?? r.created_at) : undefined}>
                {compact ? ago(r.started_at ?? r.created_at) : when(r.started_at ?? r.created_at)}
              </td>
              <td data-label="Duration" class="nowrap">
                {duration(r.duration_ms)}
              </td>
              {!compact && (
                <>
                  <td data-label="Steps" class="whole-words">
                    <StepCounts run={r} />
                  </td>
                  <td data-label="Environment">{envs(r.environment_id) ?? <span class="muted">none</span>}</td>
                  <td data-label="Started by" class="muted">
                    <StartedBy trigger={r.trigger} by={r.started_by} metadata={r.metadata} />
                  </td>
                  {byRunners && (
                    <td data-label="Runner">{r.runner ? (r.runner.name ?? r.runner.id) : <span class="muted">{r.started_at ? "server" : "–"}</span>}</td>
                  )}
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function RecentRuns({ project, limit, automation, compact = false }: { project: string; limit: number; automation?: string; compact?: boolean }) {
  const runs = useLoad(
    () => call("listRuns", { project, limit, automation: automation || undefined }),
    `recent:${project}:${automation ?? ""}`,
    (d) => (d.data.some(active) ? 1500 : LIST_POLL_MS),
  );
  if (runs.loading) return <Loading />;
  if (runs.error) return <ErrorNote message={runs.error} />;
  return <RunTable project={project} runs={runs.data?.data ?? []} compact={compact} automationColumn={!automation} />;
}

export function RunsPage({ project }: { project: string }) {
  // Filters and the page are in the URL: Back returns to the previous ones, and a link shows the same list.
  const query = useHashQuery();
  const status = (query.get("status") ?? "") as Run["status"] | "";
  const automation = query.get("automation") ?? "";
  // Set by a run page's Runner link (members cannot list runners to choose one): the runs that runner executed.
  const runner = query.get("runner") ?? "";
  const cursor = query.get("cursor");
  // The paging buttons go while the next page loads (and Older runs for good on the last one): the focus moves to
  // the list they changed, where reading goes on, not back to the top of the page.
  const list = useRef<HTMLDivElement>(null);
  const turnPage = (next: string | null) => {
    setHashQuery({ cursor: next });
    list.current?.focus();
  };
  const automations = useLoad(() => allPages((cursor) => call("listAutomations", { project, limit: 200, cursor })), `run-filter:${project}`);
  const runs = useLoad(
    () => call("listRuns", { project, limit: 50, status: chosen(status), automation: chosen(automation), runner: chosen(runner), cursor: cursor ?? undefined }),
    `runs:${project}:${status}:${automation}:${runner}:${cursor ?? ""}`,
    (d) => (d.data.some(active) ? 1500 : LIST_POLL_MS),
  );
  return (
    <ProjectFrame project={project} section="runs">
      <div class="filters">
        <Field label="Status">
          <select value={status} onChange={(e) => setHashQuery({ status: inputValue(e), cursor: null })}>
            <option value="">any</option>
            {RunStatus.options.map((s) => (
              <option key={s} value={s}>
                {s.replace("_", " ")}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Automation">
          <select value={automation} onChange={(e) => setHashQuery({ automation: inputValue(e), cursor: null })}>
            <option value="">any</option>
            {automations.data?.data.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </Field>
        {runner && (
          <div class="field" data-testid="runs-runner-filter">
            <span class="field-label">Runner</span>
            <span class="row">
              {/* Named as the runs listed name it; the filter itself is the id or name in the URL. */}
              <span>{runs.data?.data.find((r) => r.runner)?.runner?.name ?? runner}</span>
              <button type="button" class="btn" onClick={() => setHashQuery({ runner: null, cursor: null })}>
                Any runner
              </button>
            </span>
          </div>
        )}
      </div>
      <div ref={list} tabIndex={-1} role="region" aria-label="Runs listed">
        {runs.loading && <Loading what="runs" />}
        <ErrorNote message={runs.error} />
        {runs.data && <RunTable project={project} runs={runs.data.data} />}
      </div>
      <div class="row">
        {cursor && (
          <button type="button" class="btn" onClick={() => turnPage(null)}>
            First page
          </button>
        )}
        {runs.data?.next_cursor && (
          <button type="button" class="btn" onClick={() => turnPage(runs.data?.next_cursor ?? null)}>
            Older runs
          </button>
        )}
      </div>
    </ProjectFrame>
  );
}
