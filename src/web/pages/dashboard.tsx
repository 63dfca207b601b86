// The dashboard: per project, the pass rate of its recent runs with a strip chart, and the latest runs.
import { TERMINAL_RUN_STATUSES } from "../../manifest/records";
import { call, enc } from "../api";
import { useLoad } from "../hooks";
import type { Project, Run } from "../types";
import { Card, Empty, ErrorNote, Loading, duration, when } from "../ui";
import { RunStatusBadges } from "./runs";

const RECENT = 30;
/** Runs that reached a verdict: every terminal status but cancelled. */
const FINISHED = new Set<Run["status"]>(TERMINAL_RUN_STATUSES.filter((s) => s !== "cancelled"));

interface ProjectRuns {
  project: Project;
  runs: Run[];
}

async function loadDashboard(): Promise<ProjectRuns[]> {
  const projects = await call("listProjects", { limit: 50 });
  return Promise.all(
    projects.data.map(async (project) => ({
      project,
      runs: (await call("listRuns", { project: project.slug, limit: RECENT })).data,
    })),
  );
}

/** One bar per run, oldest on the left, its height the run's duration relative to the slowest. */
function RunStrip({ runs }: { runs: Run[] }) {
  const ordered = [...runs].reverse();
  const slowest = Math.max(1, ...ordered.map((r) => r.duration_ms ?? 0));
  const w = 8;
  return (
    <svg class="strip" viewBox={`0 0 ${RECENT * (w + 2)} 40`} role="img" aria-label={`Last ${ordered.length} runs`}>
      {ordered.map((r, i) => {
        const h = Math.max(6, Math.round(((r.duration_ms ?? 0) / slowest) * 38));
        return (
          <rect key={r.id} x={i * (w + 2)} y={40 - h} width={w} height={h} rx={2} class={`bar-${r.status}`}>
            <title>{`${r.automation_name}: ${r.status}, ${duration(r.duration_ms)}`}</title>
          </rect>
        );
      })}
    </svg>
  );
}

export function DashboardPage() {
  const d = useLoad(loadDashboard, "dashboard", (rows) => (rows.some((p) => p.runs.some((r) => r.status === "queued" || r.status === "running")) ? 5000 : 0));
  const recent = (d.data ?? [])
    .flatMap((p) => p.runs.map((r) => ({ r, p: p.project })))
    .sort((a, b) => b.r.created_at.localeCompare(a.r.created_at))
    .slice(0, 10);
  return (
    <div class="stack-lg">
      <h1>Dashboard</h1>
      {d.loading && <Loading />}
      <ErrorNote message={d.error} />
      {d.data && d.data.length === 0 && (
        <Empty>
          No projects yet. <a href="#/projects">Create the first project</a>.
        </Empty>
      )}
      <div class="grid">
        {d.data?.map(({ project, runs }) => {
          const finished = runs.filter((r) => FINISHED.has(r.status));
          const passed = finished.filter((r) => r.status === "passed").length;
          const rate = finished.length ? Math.round((100 * passed) / finished.length) : null;
          return (
            <a key={project.id} class="tile" href={`#/p/${enc(project.slug)}/runs`} data-project={project.slug}>
              <strong>{project.name}</strong>
              <span class={`rate ${rate === null ? "" : rate >= 90 ? "rate-good" : rate >= 60 ? "rate-mid" : "rate-bad"}`} data-testid="pass-rate">
                {rate === null ? "no finished runs" : `${rate}% passed`}
              </span>
              <span class="tile-meta">
                {finished.length} of the last {runs.length} runs finished
              </span>
              {runs.length > 0 && <RunStrip runs={runs} />}
            </a>
          );
        })}
      </div>
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
                    <td data-label="When">{when(r.created_at)}</td>
                    <td data-label="Duration">{duration(r.duration_ms)}</td>
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
