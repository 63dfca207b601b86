// The header and section tabs shared by every page inside a project.
import type { ComponentChildren } from "preact";
import { call, enc } from "../api";
import { useLoad } from "../hooks";
import { ErrorNote, Tabs } from "../ui";

export type Section = "overview" | "features" | "automations" | "runs" | "groups" | "schedules" | "environments";

export function ProjectFrame({ project, section, children }: { project: string; section: Section; children: ComponentChildren }) {
  const p = useLoad(() => call("getProject", { project }), `frame:${project}`);
  const base = `#/p/${enc(project)}`;
  return (
    <div class="stack-lg">
      <div class="crumbs">
        <a href="#/projects">Projects</a> / <strong>{p.data?.name ?? project}</strong>
      </div>
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
