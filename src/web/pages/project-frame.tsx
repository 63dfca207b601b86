// The header and section tabs shared by every page inside a project.
import type { ComponentChildren } from "preact";
import { call, enc } from "../api";
import { useLoad } from "../hooks";
import { ErrorNote, PageTitle, Tabs, useDocumentTitle } from "../ui";

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
 * section is the page's <h1>.
 */
export function ProjectFrame({ project, section, title, children }: { project: string; section: Section; title?: string | null; children: ComponentChildren }) {
  const p = useLoad(() => call("getProject", { project }), `frame:${project}`);
  const base = `#/p/${enc(project)}`;
  const name = p.data?.name ?? project;
  useDocumentTitle(title, title === undefined ? null : name);
  return (
    <div class="stack-lg">
      <div class="crumbs">
        <a href="#/projects">Projects</a> / <strong>{name}</strong>
      </div>
      {title === undefined && <PageTitle title={SECTION_TITLES[section]} context={name} />}
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
