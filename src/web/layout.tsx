// The frame around every signed-in page: the top bar with navigation and the signed-in person.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { web } from "./api";
import { AssistantPanel } from "./assistant";
import { PendingInvitations } from "./pages/invitations";
import { hashQuery, navigate, useHashPath } from "./router";
import { canAdminister, useSession } from "./session";

export function Layout({ children }: { children: ComponentChildren }) {
  const { session, refresh } = useSession();
  const path = useHashPath();
  const [assistant, setAssistant] = useState(false);
  // Opening the assistant moves the focus into it; closing it brings the focus back to its button.
  const assistantButton = useRef<HTMLButtonElement>(null);
  const toggled = useRef(false);
  useEffect(() => {
    if (!toggled.current) return;
    if (assistant) document.getElementById("assistant-text")?.focus();
    else assistantButton.current?.focus();
  }, [assistant]);
  const showAssistant = (v: boolean) => {
    toggled.current = true;
    setAssistant(v);
  };
  const links = [
    { href: "#/", label: "Dashboard", active: path === "/" },
    { href: "#/projects", label: "Projects", active: path.startsWith("/projects") || path.startsWith("/p/") },
    ...(canAdminister(session) ? [{ href: "#/members", label: "Members", active: path.startsWith("/members") }] : []),
    { href: "#/settings/keys", label: "CLI & API keys", active: path.startsWith("/settings/keys") },
    ...(canAdminister(session) ? [{ href: "#/settings/runners", label: "Runners", active: path.startsWith("/settings/runners") }] : []),
  ];
  const several = (session.workspaces?.length ?? 0) > 1;
  // The workspace can be in the URL (`?ws=slug`, as the switcher puts it): a link opens in its workspace.
  const wanted = hashQuery(path).get("ws");
  const [switching, setSwitching] = useState<string | null>(null);
  // A link into another of the person's workspaces: its page waits for the switch, or it would first ask the
  // current workspace for what is not there (404s). A switch that failed shows the current workspace, saying so.
  const [wrongWorkspace, setWrongWorkspace] = useState<string | null>(null);
  useEffect(() => {
    setWrongWorkspace(null);
    if (!wanted || wanted === session.workspace?.slug) return;
    const target = session.workspaces?.find((w) => w.slug === wanted);
    if (!target) {
      setWrongWorkspace(`This link is for workspace "${wanted}", which you are not a member of: you see workspace ${session.workspace?.name ?? ""}.`);
      return;
    }
    setSwitching(target.name);
    void web("POST", "/workspace", { workspace: target.id })
      .then(refresh)
      .catch((e: Error) => setWrongWorkspace(e.message))
      .finally(() => setSwitching(null));
  }, [wanted, session.workspace?.slug]);
  const switchAhead = wanted && wanted !== session.workspace?.slug ? session.workspaces?.find((w) => w.slug === wanted) : undefined;
  const switchTo = (workspace: string) => {
    const slug = session.workspaces?.find((w) => w.id === workspace)?.slug;
    if (slug) navigate(`/?ws=${encodeURIComponent(slug)}`);
  };
  // Signed out first, then sent to the start: moved there while still signed in, the dashboard would load (and be refused).
  const signOut = async () => {
    await web("POST", "/logout");
    await refresh();
    location.hash = "/";
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
            <select aria-label="Workspace" class="who-switch" value={session.workspace?.id} onChange={(e) => switchTo(e.currentTarget.value)}>
              {session.workspaces?.map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
            </select>
          )}
          <button type="button" class="btn btn-quiet" ref={assistantButton} aria-expanded={assistant} onClick={() => showAssistant(!assistant)}>
            Assistant
          </button>
          <button type="button" class="btn btn-quiet" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main class="content">
        <PendingInvitations />
        {wrongWorkspace && (
          <div class="note note-warn" role="alert">
            {wrongWorkspace}
          </div>
        )}
        {switching || (switchAhead && !wrongWorkspace) ? <p class="muted">Switching to workspace {switching ?? switchAhead?.name}…</p> : children}
      </main>
      {assistant && <AssistantPanel onClose={() => showAssistant(false)} />}
    </div>
  );
}
