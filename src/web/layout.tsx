// The frame around every signed-in page: the top bar with navigation and the signed-in person.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { web } from "./api";
import { AssistantPanel } from "./assistant";
import { PendingInvitations } from "./pages/invitations";
import { useHashPath } from "./router";
import { canAdminister, useSession } from "./session";

export function Layout({ children }: { children: ComponentChildren }) {
  const { session, refresh } = useSession();
  const path = useHashPath();
  const [assistant, setAssistant] = useState(false);
  const links = [
    { href: "#/", label: "Dashboard", active: path === "/" },
    { href: "#/projects", label: "Projects", active: path.startsWith("/projects") || path.startsWith("/p/") },
    ...(canAdminister(session) ? [{ href: "#/members", label: "Members", active: path.startsWith("/members") }] : []),
    { href: "#/settings/keys", label: "CLI & API keys", active: path.startsWith("/settings/keys") },
    ...(canAdminister(session) ? [{ href: "#/settings/runners", label: "Runners", active: path.startsWith("/settings/runners") }] : []),
  ];
  const several = (session.workspaces?.length ?? 0) > 1;
  const switchTo = async (workspace: string) => {
    await web("POST", "/workspace", { workspace });
    location.hash = "/";
    await refresh();
  };
  const signOut = async () => {
    await web("POST", "/logout");
    location.hash = "/";
    await refresh();
  };
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href="#/">
          svc
        </a>
        <nav class="mainnav" aria-label="Main">
          {links.map((l) => (
            <a key={l.href} href={l.href} class={l.active ? "active" : ""} aria-current={l.active ? "page" : undefined}>
              {l.label}
            </a>
          ))}
        </nav>
        <div class="who">
          <span class="who-name" title={session.user?.email}>
            {session.user?.name}
            {several ? "" : ` · ${session.workspace?.name ?? ""}`}
          </span>
          {several && (
            <select aria-label="Workspace" class="who-switch" value={session.workspace?.id} onChange={(e) => void switchTo(e.currentTarget.value)}>
              {session.workspaces?.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          )}
          <button type="button" class="btn btn-quiet" aria-expanded={assistant} onClick={() => setAssistant(!assistant)}>
            Assistant
          </button>
          <button type="button" class="btn btn-quiet" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main class="content">
        <PendingInvitations />
        {children}
      </main>
      {assistant && <AssistantPanel onClose={() => setAssistant(false)} />}
    </div>
  );
}
