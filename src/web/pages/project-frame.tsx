// The header and section tabs shared by every page inside a project.
import type { ComponentChildren } from "preact";
import { ApiError, call, enc } from "../api";
import { useLoad } from "../hooks";
import { ErrorNote, Tabs, useDocumentTitle } from "../ui";

export type Section = "overview" | "features" | "automations" | "runs" | "groups" | "schedules" | "environments";

const SECTION_TITLES: Record<Section, string> = {
  overview: "Overview",
  features: "Features",
  automations: "Automations",
  runs: "Runs",
  groups: "Groups",
  schedules: "Schedules & alerts",
  environments: "Environments",
};

/**
 * `title` names a record's own page (its first card's heading is the page's <h1>, `level={1}`); without it the
 * section is the page's <h1>. A project that does not exist (or not for this person) is said once, in place of the
 * page: the page's own reads would only say it again.
 */
export function ProjectFrame({ project, section, title, children }: { project: string; section: Section; title?: string | null; children: ComponentChildren }) {
  const p = useLoad(async () => {
    try {
      return { found: await call("getProject", { project }) };
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return { found: null };
      throw e;
    }
  }, `frame:${project}`);
  const base = `#/p/${enc(project)}`;
  const missing = p.data !== null && p.data.found === null;
  const name = p.data?.found?.name ?? project;
  // Set here only (not by a <PageTitle> inside): the frame's effect runs after its children's and would win.
  useDocumentTitle(missing ? "Project not found" : title === undefined ? SECTION_TITLES[section] : title, missing ? null : name);
  if (missing)
    return (
      <div class="stack-lg">
        <div class="crumbs">
          <a href="#/projects">Projects</a>
        </div>
        <h1 class="page-title">Project not found</h1>
        <p data-testid="project-not-found">
          There is no project <code>{project}</code> in this workspace (or it was deleted). <a href="#/projects">See all projects</a>.
        </p>
      </div>
    );
  return (
    <div class="stack-lg">
      <div class="crumbs">
        <a href="#/projects">Projects</a> / <strong>{name}</strong>
      </div>
      {title === undefined && <h1 class="page-title">{SECTION_TITLES[section]}</h1>}
      <ErrorNote message={p.error} />
      <Tabs
        active={section}
        items={[
          { id: "overview", label: "Overview", href: base },
          { id: "features", label: "Features", href: `${base}/features` },
          { id: "automations", label: "Automations", href: `${base}/automations` },
          { id: "runs", label: "Runs", href: `${base}/runs` },
          { id: "groups", label: "Groups", href: `${base}/groups` },
          { id: "schedules", label: "Schedules & alerts", href: `${base}/schedules` },
          { id: "environments", label: "Environments", href: `${base}/environments` },
        ]}
      />
      {children}
    </div>
  );
}
