// The pages before sign-in: first-run setup, sign in, and setting a password from an invitation link.
import { useEffect, useState } from "preact/hooks";
import { web } from "../api";
import { useAction } from "../hooks";
import { ErrorNote, Field, inputValue, PageTitle } from "../ui";

function AuthFrame({ title, intro, children }: { title: string; intro?: string; children: preact.ComponentChildren }) {
  return (
    <main class="auth">
      <div class="auth-card">
        <div class="brand brand-big">svc</div>
        <PageTitle title={title} />
        {intro && <p class="muted">{intro}</p>}
        {children}
      </div>
    </main>
  );
}

export function SetupPage({ onDone, hint }: { onDone: () => Promise<void>; hint: string | null }) {
  if (hint !== null) {
    return (
      <AuthFrame title="Set up svc">
        <div class="note note-warn" data-testid="setup-elsewhere">
          {hint}
        </div>
      </AuthFrame>
    );
  }
  return <SetupForm onDone={onDone} />;
}

function SetupForm({ onDone }: { onDone: () => Promise<void> }) {
  const [f, setF] = useState({ workspace: "", name: "", email: "", password: "" });
  const a = useAction();
  const set = (k: keyof typeof f) => (e: { currentTarget: HTMLInputElement }) => setF({ ...f, [k]: inputValue(e) });
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await a.run(() => web("POST", "/setup", f))) await onDone();
  };
  return (
    <AuthFrame title="Set up svc" intro="Nobody uses this installation yet. Create the first workspace and its owner account.">
      <form onSubmit={submit} class="stack">
        <Field label="Workspace name">
          <input required value={f.workspace} onInput={set("workspace")} placeholder="Acme QA" />
        </Field>
        <Field label="Your name">
          <input required value={f.name} onInput={set("name")} autocomplete="name" />
        </Field>
        <Field label="Email">
          <input required type="email" value={f.email} onInput={set("email")} autocomplete="email" />
        </Field>
        <Field label="Password" hint="At least 10 characters.">
          <input required type="password" minLength={10} value={f.password} onInput={set("password")} autocomplete="new-password" />
        </Field>
        <ErrorNote message={a.error} details={a.details} />
        <button class="btn btn-primary" disabled={a.busy}>
          Create workspace
        </button>
      </form>
    </AuthFrame>
  );
}

export function LoginPage({ onDone }: { onDone: () => Promise<void> }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const a = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await a.run(() => web("POST", "/login", { email, password }))) await onDone();
  };
  return (
    <AuthFrame title="Sign in">
      <form onSubmit={submit} class="stack">
        <Field label="Email">
          <input required type="email" value={email} onInput={(e) => setEmail(inputValue(e))} autocomplete="username" />
        </Field>
        <Field label="Password">
          <input required type="password" value={password} onInput={(e) => setPassword(inputValue(e))} autocomplete="current-password" />
        </Field>
        <ErrorNote message={a.error} />
        <button class="btn btn-primary" disabled={a.busy}>
          Sign in
        </button>
      </form>
    </AuthFrame>
  );
}

export function SetupPasswordPage({ onDone }: { onDone: () => void }) {
  const token = new URLSearchParams(location.search).get("token") ?? "";
  const [who, setWho] = useState<{ email: string; name: string } | null>(null);
  const [bad, setBad] = useState<string | null>(null);
  const [password, setPassword] = useState("");
  const a = useAction();
  useEffect(() => {
    web<{ email: string; name: string }>("GET", `/setup-password?token=${encodeURIComponent(token)}`).then(setWho, (e: Error) => setBad(e.message));
  }, [token]);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await a.run(() => web("POST", "/setup-password", { token, password }))) onDone();
  };
  if (bad)
    return (
      <AuthFrame title="Set your password">
        <ErrorNote message={bad} />
        <a href="/">Go to sign in</a>
      </AuthFrame>
    );
  if (!who)
    return (
      <AuthFrame title="Set your password">
        <p class="muted">Checking the link…</p>
      </AuthFrame>
    );
  return (
    <AuthFrame title="Set your password" intro={`Welcome, ${who.name}. Choose a password for ${who.email}.`}>
      <form onSubmit={submit} class="stack">
        <Field label="New password" hint="At least 10 characters.">
          <input required type="password" minLength={10} value={password} onInput={(e) => setPassword(inputValue(e))} autocomplete="new-password" />
        </Field>
        <ErrorNote message={a.error} details={a.details} />
        <button class="btn btn-primary" disabled={a.busy}>
          Set password and sign in
        </button>
      </form>
    </AuthFrame>
  );
}
