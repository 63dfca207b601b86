// The dashboard: per project, the share of its automations passing now (each by its latest run, flaky counted
// apart), and the latest runs — one read of get_dashboard, repeated: every 5 s while runs are queued or running, and
// every 20 s otherwise, so a wall screen never goes stale (180 requests an hour of the workspace's 5,000 by default).
import { DASHBOARD_PROJECTS } from "../../manifest/records";
import { call, enc } from "../api";
import { useLoad } from "../hooks";
import { Card, Empty, ErrorNote, Loading, PageTitle, duration, when } from "../ui";
import { RunStatusBadges } from "./runs";

/** How often the dashboard reads again: soon while runs are going, else still now and then. */
const BUSY_MS = 5_000;
const IDLE_MS = 20_000;

export function DashboardPage() {
  const d = useLoad(
    () => call("getDashboard", {}),
    "dashboard",
    ({ projects }) => (projects.some((p) => p.queued > 0 || p.running > 0) ? BUSY_MS : IDLE_MS),
  );
  const rows = d.data?.projects;
  const projectOf = new Map((rows ?? []).map((p) => [p.id, p]));
  const recent = (d.data?.recent_runs ?? []).flatMap((r) => {
    const p = projectOf.get(r.project_id);
    return p ? [{ r, p }] : [];
  });
  return (
    <div class="stack-lg">
      <PageTitle title="Dashboard" />
      {d.loading && <Loading />}
      <ErrorNote message={d.error} />
      {rows && rows.length === 0 && (
        <Empty>
          No projects yet. <a href="#/projects">Create the first project</a>.
        </Empty>
      )}
      <div class="grid">
        {rows?.map((project) => {
          const known = project.passing + project.flaky + project.failing;
          const rate = known ? Math.round((100 * project.passing) / known) : null;
          return (
            <a key={project.id} class="tile" href={`#/p/${enc(project.slug)}`} data-project={project.slug}>
              <strong>{project.name}</strong>
              <span class={`rate ${rate === null ? "" : rate >= 90 ? "rate-good" : rate >= 60 ? "rate-mid" : "rate-bad"}`} data-testid="pass-rate">
                {rate === null ? "nothing has run yet" : `${rate}% passing now`}
              </span>
              <span class="tile-meta" data-testid="health-counts">
                {known === 0
                  ? `${project.automations} automations`
                  : `${project.passing} of ${known} automations passing by their latest run · ${project.flaky} flaky · ${project.failing} failing`}
                {/* Health counts finished runs that give a verdict: cancelled ones do not, so "never ran" would be untrue. */}
                {project.without_verdict > 0 && known > 0 ? ` · ${project.without_verdict} without a verdict yet` : ""}
              </span>
            </a>
          );
        })}
      </div>
      {d.data?.more_projects && (
        <p class="muted" data-testid="more-projects">
          The first {DASHBOARD_PROJECTS} projects are shown: <a href="#/projects">see every project</a>.
        </p>
      )}
      {recent.length > 0 && (
        <Card title="Recent runs">
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Status</th>
                  <th>Automation</th>
                  <th>Project</th>
                  <th>When</th>
                  <th>Duration</th>
                </tr>
              </thead>
              <tbody>
                {recent.map(({ r, p }) => (
                  <tr key={r.id}>
                    <td data-label="Status">
                      <a href={`#/p/${enc(p.slug)}/runs/${r.id}`}>
                        <RunStatusBadges run={r} />
                      </a>
                    </td>
                    <td data-label="Automation">
                      <a href={`#/p/${enc(p.slug)}/runs/${r.id}`}>{r.automation_name}</a>
                    </td>
                    <td data-label="Project">{p.name}</td>
                    <td data-label="When" class="whole-words">
                      {when(r.created_at)}
                    </td>
                    <td data-label="Duration" class="whole-words">
                      {duration(r.duration_ms)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </div>
  );
}
