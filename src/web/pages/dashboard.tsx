// The dashboard: per project, the share of its automations passing now (each by its latest run, flaky counted
// apart), and the latest runs.
import { allPages, call, enc } from "../api";
import { useLoad } from "../hooks";
import type { Automation, Project, Run } from "../types";
import { Card, Empty, ErrorNote, Loading, PageTitle, duration, when } from "../ui";
import { healthCounts } from "./health";
import { RunStatusBadges } from "./runs";

const RECENT = 30;
const DASHBOARD_PROJECTS = 50;

interface ProjectRuns {
  project: Project;
  runs: Run[];
  automations: Automation[];
}

/** The projects' tiles, and whether the workspace has more projects than the dashboard shows. */
async function loadDashboard(): Promise<{ rows: ProjectRuns[]; more: boolean }> {
  // At most DASHBOARD_PROJECTS tiles: each costs two requests of the workspace's budget on every refresh.
  const projects = await call("listProjects", { limit: DASHBOARD_PROJECTS });
  const rows = await Promise.all(
    projects.data.map(async (project) => ({
      project,
      runs: (await call("listRuns", { project: project.slug, limit: RECENT })).data,
      automations: (await allPages((cursor) => call("listAutomations", { project: project.slug, limit: 200, cursor }))).data.filter(
        (a) => a.status !== "disabled",
      ),
    })),
  );
  return { rows, more: projects.next_cursor !== null };
}

export function DashboardPage() {
  const d = useLoad(loadDashboard, "dashboard", ({ rows }) =>
    rows.some((p) => p.runs.some((r) => r.status === "queued" || r.status === "running")) ? 5000 : 0,
  );
  const rows = d.data?.rows;
  const recent = (rows ?? [])
    .flatMap((p) => p.runs.map((r) => ({ r, p: p.project })))
    .sort((a, b) => b.r.created_at.localeCompare(a.r.created_at))
    .slice(0, 10);
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
        {rows?.map(({ project, automations }) => {
          const c = healthCounts(automations);
          const rate = c.known ? Math.round((100 * c.passing) / c.known) : null;
          return (
            <a key={project.id} class="tile" href={`#/p/${enc(project.slug)}`} data-project={project.slug}>
              <strong>{project.name}</strong>
              <span class={`rate ${rate === null ? "" : rate >= 90 ? "rate-good" : rate >= 60 ? "rate-mid" : "rate-bad"}`} data-testid="pass-rate">
                {rate === null ? "nothing has run yet" : `${rate}% passing now`}
              </span>
              <span class="tile-meta" data-testid="health-counts">
                {c.known === 0
                  ? `${automations.length} automations`
                  : `${c.passing} of ${c.known} automations passing by their latest run · ${c.flaky} flaky · ${c.failing} failing`}
                {/* Health counts finished runs that give a verdict: cancelled ones do not, so "never ran" would be untrue. */}
                {c.never > 0 && c.known > 0 ? ` · ${c.never} without a verdict yet` : ""}
              </span>
            </a>
          );
        })}
      </div>
      {d.data?.more && (
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
