// The small set of building blocks every page uses: badges, fields, buttons with confirmation, messages.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

export function Badge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status.replace("_", " ")}</span>;
}

export function ErrorNote({ message, details }: { message: string | null; details?: { path: string; message: string }[] }) {
  if (!message) return null;
  return (
    <div class="note note-error" role="alert">
      {message}
      {details && details.length > 0 && (
        <ul class="details">
          {details.map((d) => (
            <li key={d.path + d.message}>
              <code>{d.path || "(body)"}</code> {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Loading({ what }: { what?: string }) {
  return <p class="muted">Loading{what ? ` ${what}` : ""}…</p>;
}

export function Field({ label, children, hint }: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class="field">
      <span class="field-label">{label}</span>
      {children}
      {hint && <span class="field-hint">{hint}</span>}
    </label>
  );
}

export function Card({ title, actions, children }: { title?: ComponentChildren; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section class="card">
      {(title || actions) && (
        <header class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="row">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

/** A destructive button that asks once more, inline, before acting. */
export function ConfirmButton({ label, question, onConfirm }: { label: string; question: string; onConfirm: () => void | Promise<void> }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return <button type="button" class="btn btn-danger-quiet" onClick={() => setAsking(true)}>{label}</button>;
  }
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button type="button" class="btn btn-danger" onClick={async () => { setAsking(false); await onConfirm(); }}>Yes, {label.toLowerCase()}</button>
      <button type="button" class="btn" onClick={() => setAsking(false)}>Cancel</button>
    </span>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return `${d.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" })} ${d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })}`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function Tabs({ items, active }: { items: { href: string; label: string; id: string }[]; active: string }) {
  return (
    <nav class="tabs" aria-label="Sections">
      {items.map((i) => (
        <a key={i.id} href={i.href} class={i.id === active ? "tab active" : "tab"} aria-current={i.id === active ? "page" : undefined}>{i.label}</a>
      ))}
    </nav>
  );
}

export const inputValue = (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement }) => e.currentTarget.value;

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
