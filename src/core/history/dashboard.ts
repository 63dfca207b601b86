// The workspace at a glance (get_dashboard): what the web app's dashboard shows, in one read a wall screen can
// repeat without spending the workspace's request budget project by project.
import { DASHBOARD_PROJECTS, DASHBOARD_RECENT_RUNS, type ops } from "../../manifest";
import { enabledAutomationsOf } from "../automations/store";
import type { Handler } from "../handler";
import { projectsQuery } from "../projects/store";
import { toRun } from "../runs/operations";
import { activeRunCounts, latestRunsOf } from "../runs/store";
import { fetchPage } from "../shared/pagination";
import { healthOfAutomations } from "./operations";

type O = typeof ops;

export const getDashboard: Handler<O["getDashboard"]> = async ({ core, principal }) => {
  const projects = await fetchPage(projectsQuery(core.db, principal.workspaceId), "projects", { limit: DASHBOARD_PROJECTS }, (r) => r);
  const ids = projects.data.map((p) => p.id);
  const automations = await enabledAutomationsOf(core.db, ids);
  const health = await healthOfAutomations(
    core,
    automations.map((a) => a.id),
  );
  const blank = () => ({ automations: 0, passing: 0, flaky: 0, failing: 0, without_verdict: 0, queued: 0, running: 0 });
  const counts = new Map(ids.map((id) => [id, blank()]));
  for (const a of automations) {
    const c = counts.get(a.project_id);
    if (!c) continue;
    c.automations++;
    const state = health.get(a.id)?.state ?? "unknown";
    if (state === "unknown") c.without_verdict++;
    else c[state]++;
  }
  for (const r of await activeRunCounts(core.db, ids)) {
    const c = counts.get(r.project_id);
    if (c && (r.status === "queued" || r.status === "running")) c[r.status] += r.n;
  }
  return {
    projects: projects.data.map((p) => ({ id: p.id, slug: p.slug, name: p.name, ...(counts.get(p.id) ?? blank()) })),
    more_projects: projects.next_cursor !== null,
    recent_runs: (await latestRunsOf(core.db, ids, DASHBOARD_RECENT_RUNS)).map((r) => toRun(r, false)),
  };
};
