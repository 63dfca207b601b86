// One group run: its derived status and the results of all its runs together, live while any is active.
import { call, enc, operationHref } from "../api";
import { useAction, useLoad } from "../hooks";
import { navigate } from "../router";
import { Badge, Card, ErrorNote, Loading, duration, when } from "../ui";
import { ProjectFrame } from "./project-frame";
import { RunTable } from "./runs";

export function GroupRunPage({ project, groupRunId }: { project: string; groupRunId: string }) {
  const gr = useLoad(
    (wait) => call("getGroupRun", { project, groupRunId, wait }),
    `grn:${groupRunId}`,
    (d) => (d.status === "queued" || d.status === "running" ? 1000 : 0),
    true,
  );
  const a = useAction();
  const r = gr.data;
  return (
    <ProjectFrame project={project} section="groups" title={r ? `Group run of ${r.group_name}` : "Group run"}>
      {gr.loading && <Loading />}
      <ErrorNote message={gr.error} />
      {r && (
        <Card
          level={1}
          title={<>Group run of {r.group_id ? <a href={`#/p/${enc(project)}/groups/${r.group_id}`}>{r.group_name}</a> : r.group_name}</>}
          actions={
            <>
              {r.group_id && r.status !== "queued" && r.status !== "running" && (
                <button
                  type="button"
                  class="btn"
                  disabled={a.busy}
                  onClick={() =>
                    void a.run(async () => {
                      // The same group in the environment its runs used.
                      const env = r.runs?.[0]?.environment_id;
                      const next = await call("runGroup", { project, groupId: r.group_id ?? "", environment: env || undefined });
                      navigate(`/p/${enc(project)}/group-runs/${next.id}`);
                    })
                  }
                >
                  Run again
                </button>
              )}
              {r.status !== "queued" && r.status !== "running" && r.summary.failed + r.summary.error + r.summary.timed_out + r.summary.cancelled > 0 && (
                <button
                  type="button"
                  class="btn"
                  disabled={a.busy}
                  onClick={() =>
                    void a.run(async () => {
                      // Its environment, variables and metadata are reused by the server.
                      const next = await call("runSelection", { project, from_group_run: r.id, only_failed: true });
                      navigate(`/p/${enc(project)}/group-runs/${next.id}`);
                    })
                  }
                >
                  Re-run failed
                </button>
              )}
              <a class="btn" href={operationHref("getGroupRunJunit", { project, groupRunId: r.id })} download={`${r.id}.xml`}>
                JUnit XML
              </a>
            </>
          }
        >
          <ErrorNote message={a.error} />
          <dl class="facts">
            <div>
              <dt>Status</dt>
              <dd data-testid="group-run-status">
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
            <div>
              <dt>Results</dt>
              <dd>
                {r.summary.passed} passed{r.summary.flaky > 0 ? ` (${r.summary.flaky} flaky)` : ""} · {r.summary.failed} failed · {r.summary.error} error ·{" "}
                {r.summary.queued + r.summary.running} pending
              </dd>
            </div>
          </dl>
          <RunTable project={project} runs={r.runs ?? []} />
        </Card>
      )}
    </ProjectFrame>
  );
}
