// One group run: its derived status and the results of all its runs together, failures first, live while any is active.
import { useRef } from "preact/hooks";
import { FAILED_RUN_STATUSES } from "../../manifest/records";
import { call, enc, operationHref } from "../api";
import { useAction, useLoad } from "../hooks";
import { navigate } from "../router";
import { Badge, Card, ErrorNote, Loading, duration, when } from "../ui";
import type { GroupRun, Run } from "../types";
import { ProjectFrame } from "./project-frame";
import { OriginFacts, useRunEnvironment } from "./run-environment";
import { RunTable } from "./runs";

/**
 * Cancel group run while it goes on; once ended, Run again / Re-run failed, in the environment chosen beside them:
 * by default this group run's own (the server reuses its environment, variables and metadata for a re-run of its
 * failures).
 */
function GroupRunActions({ project, r, reload, onCancelled }: { project: string; r: GroupRun; reload: () => Promise<void>; onCancelled: () => void }) {
  const a = useAction();
  const ended = r.status !== "queued" && r.status !== "running";
  const failures = r.summary.failed + r.summary.error + r.summary.timed_out + r.summary.cancelled;
  const env = useRunEnvironment(project, r.runs ?? [], { label: "as this group run", id: r.environment_id });
  const junit = (
    <a class="btn" href={operationHref("getGroupRunJunit", { project, groupRunId: r.id })} download={`${r.id}.xml`}>
      JUnit XML
    </a>
  );
  if (!ended)
    return (
      <>
        <button
          type="button"
          class="btn"
          disabled={a.busy}
          onClick={() =>
            void a.run(async () => {
              await call("cancelGroupRun", { project, groupRunId: r.id });
              await reload();
              onCancelled();
            })
          }
        >
          Cancel group run
        </button>
        {junit}
        <ErrorNote message={a.error} />
      </>
    );
  if (!r.group_id && failures === 0) return junit;
  // Starts another group run in the environment picked (remembered as the last one used) and opens it.
  const startAnother = (start: () => Promise<{ id: string }>) => () =>
    void a.run(async () => {
      env.remember();
      const next = await start();
      navigate(`/p/${enc(project)}/group-runs/${next.id}`);
    });
  // The same group: in the chosen environment, else the one its runs used.
  const same = r.environment_id ?? r.runs?.[0]?.environment_id ?? undefined;
  return (
    <>
      {env.picker}
      {r.group_id && (
        <button
          type="button"
          class="btn"
          disabled={a.busy}
          onClick={startAnother(() => call("runGroup", { project, groupId: r.group_id ?? "", environment: env.environment ?? (same || undefined) }))}
        >
          Run again
        </button>
      )}
      {failures > 0 && (
        <button
          type="button"
          class="btn"
          disabled={a.busy}
          // Unless another is chosen, its environment, variables and metadata are reused by the server.
          onClick={startAnother(() => call("runSelection", { project, from_group_run: r.id, only_failed: true, environment: env.environment }))}
        >
          Re-run failed
        </button>
      )}
      {junit}
      <ErrorNote message={a.error} />
    </>
  );
}

/**
 * Every run counted once by its status (none left out: timed out and cancelled runs too), then the quarantined
 * failures among them, which do not fail the group run.
 */
export function groupRunResults(s: GroupRun["summary"]): string {
  const parts = [`${s.passed} passed${s.flaky > 0 ? ` (${s.flaky} flaky)` : ""}`, `${s.failed} failed`];
  for (const [n, label] of [
    [s.error, "error"],
    [s.timed_out, "timed out"],
    [s.cancelled, "cancelled"],
    [s.queued + s.running, "pending"],
  ] as const)
    if (n > 0) parts.push(`${n} ${label}`);
  const apart = s.quarantined > 0 ? ` (${s.quarantined} quarantined: not counted)` : "";
  return parts.join(" · ") + apart;
}

/** The runs that did not pass come first (a failed CI job is read for them), each part in the group's order. */
function failuresFirst(runs: Run[]): Run[] {
  const failed = (x: Run) => FAILED_RUN_STATUSES.includes(x.status) || x.status === "cancelled";
  return [...runs.filter(failed), ...runs.filter((x) => !failed(x))];
}

export function GroupRunPage({ project, groupRunId }: { project: string; groupRunId: string }) {
  const gr = useLoad(
    (wait) => call("getGroupRun", { project, groupRunId, wait }),
    `grn:${groupRunId}`,
    (d) => (d.status === "queued" || d.status === "running" ? 1000 : 0),
    true,
  );
  const r = gr.data;
  // Cancelling removes its button: the focus moves to the status it changed, not back to the top of the page.
  const statusRef = useRef<HTMLElement>(null);
  return (
    <ProjectFrame project={project} section="groups" title={r ? `Group run of ${r.group_name}` : "Group run"}>
      {gr.loading && <Loading />}
      <ErrorNote message={gr.error} />
      {r && (
        <Card
          level={1}
          title={<>Group run of {r.group_id ? <a href={`#/p/${enc(project)}/groups/${r.group_id}`}>{r.group_name}</a> : r.group_name}</>}
          actions={<GroupRunActions project={project} r={r} reload={gr.reload} onCancelled={() => statusRef.current?.focus()} />}
        >
          <dl class="facts">
            <div>
              <dt>Status</dt>
              {/* Announced when it changes: a group run followed live ends without a reload. */}
              <dd data-testid="group-run-status" ref={statusRef} tabIndex={-1} aria-live="polite" aria-atomic="true">
                <Badge status={r.status} />
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
            <OriginFacts project={project} record={r} />
            <div>
              <dt>Results</dt>
              <dd data-testid="group-run-results">{groupRunResults(r.summary)}</dd>
            </div>
          </dl>
          {r.waiting_for && (
            <div class="note note-warn" data-testid="group-run-waiting">
              {r.waiting_for}
            </div>
          )}
          {/* A heading to jump to from a screen reader's list of headings: the table is what the page is read for. */}
          <h2 class="visually-hidden">Runs, those that did not pass first</h2>
          <RunTable project={project} runs={failuresFirst(r.runs ?? [])} />
        </Card>
      )}
    </ProjectFrame>
  );
}
