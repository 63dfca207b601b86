// The web application's entry: decides between first-run setup, sign-in, password setup and the signed-in app.
import "./no-eval";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { whenSignedOut } from "./api";
import { Layout } from "./layout";
import { LoginPage, SetupPage, SetupPasswordPage } from "./pages/auth";
import { Routes } from "./routes";
import { loadSession, SessionContext } from "./session";
import type { SessionState } from "./types";

function App() {
  const [session, setSession] = useState<SessionState | null>(null);
  const [error, setError] = useState<string | null>(null);
  const refresh = async () => {
    try {
      setSession(await loadSession());
      setError(null);
    } catch (e) {
      setError((e as Error).message);
    }
  };
  useEffect(() => {
    whenSignedOut(() => void refresh());
    void refresh();
  }, []);
  if (error)
    return (
      <main class="center">
        <div class="note note-error">The service could not be reached: {error}</div>
      </main>
    );
  if (!session)
    return (
      <main class="center">
        <p class="muted">Loading…</p>
      </main>
    );
  if (location.pathname === "/setup-password")
    return (
      <SetupPasswordPage
        onDone={() => {
          history.replaceState(null, "", "/#/");
          void refresh();
        }}
      />
    );
  if (session.setup_required) return <SetupPage onDone={refresh} hint={session.setup_allowed === false ? (session.setup_hint ?? "") : null} />;
  if (!session.signed_in) return <LoginPage onDone={refresh} />;
  return (
    <SessionContext.Provider value={{ session, refresh }}>
      <Layout>
        <Routes />
      </Layout>
    </SessionContext.Provider>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
