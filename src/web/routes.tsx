// Which page a hash path shows.
import { match, useHashPath } from "./router";
import { AutomationPage } from "./pages/automation";
import { AutomationsPage } from "./pages/automations";
import { DashboardPage } from "./pages/dashboard";
import { EnvironmentsPage } from "./pages/environments";
import { FeaturePage } from "./pages/feature";
import { FeaturesPage } from "./pages/features";
import { GroupPage, GroupsPage } from "./pages/groups";
import { GroupRunPage } from "./pages/group-run";
import { KeysPage } from "./pages/keys";
import { MembersPage } from "./pages/members";
import { ProjectPage } from "./pages/project";
import { ProjectsPage } from "./pages/projects";
import { RunnersPage } from "./pages/runners";
import { RunPage } from "./pages/run";
import { RunsPage } from "./pages/runs";
import { SchedulesPage } from "./pages/schedules";
import { Empty, PageTitle } from "./ui";

type Params = Record<string, string>;
const p = (x: Params, k: string) => x[k] ?? "";

const table: [string, (x: Params) => preact.JSX.Element][] = [
  ["/", () => <DashboardPage />],
  ["/projects", () => <ProjectsPage />],
  ["/members", () => <MembersPage />],
  ["/settings/keys", () => <KeysPage />],
  ["/settings/runners", () => <RunnersPage />],
  ["/p/:project", (x) => <ProjectPage project={p(x, "project")} />],
  ["/p/:project/environments", (x) => <EnvironmentsPage project={p(x, "project")} />],
  ["/p/:project/features", (x) => <FeaturesPage project={p(x, "project")} />],
  ["/p/:project/features/:feature", (x) => <FeaturePage project={p(x, "project")} feature={p(x, "feature")} />],
  ["/p/:project/automations", (x) => <AutomationsPage project={p(x, "project")} />],
  ["/p/:project/automations/:id", (x) => <AutomationPage project={p(x, "project")} automationId={p(x, "id")} />],
  ["/p/:project/runs", (x) => <RunsPage project={p(x, "project")} />],
  ["/p/:project/runs/:id", (x) => <RunPage project={p(x, "project")} runId={p(x, "id")} />],
  ["/p/:project/groups", (x) => <GroupsPage project={p(x, "project")} />],
  ["/p/:project/groups/:id", (x) => <GroupPage project={p(x, "project")} groupId={p(x, "id")} />],
  ["/p/:project/schedules", (x) => <SchedulesPage project={p(x, "project")} />],
  ["/p/:project/group-runs/:id", (x) => <GroupRunPage project={p(x, "project")} groupRunId={p(x, "id")} />],
];

export function Routes() {
  const path = useHashPath();
  for (const [pattern, page] of table) {
    const params = match(pattern, path);
    if (params) return <div key={path.split("?")[0]}>{page(params)}</div>;
  }
  return (
    <div class="stack-lg">
      <PageTitle title="Page not found" />
      <Empty>
        There is no page at {path}. <a href="#/">Go to the dashboard</a>.
      </Empty>
    </div>
  );
}
