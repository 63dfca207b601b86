// The small set of building blocks every page uses: badges, fields, buttons with confirmation, messages, and
// copy blocks that still copy where the browser gives no clipboard API (plain HTTP on another host than localhost).
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

export function Badge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status.replace("_", " ")}</span>;
}

/** Where in the request a problem is, in the form's words: `secrets.TOKEN` for the body's `body.secrets.TOKEN`. */
function fieldPath(path: string): string {
  return path.replace(/^(body|query)(\.|$)/, "");
}

/**
 * An action's error: its message once, then only the details it does not already say (the API's message names the
 * first problem; a request with several lists the others).
 */
export function ErrorNote({ message, details }: { message: string | null; details?: { path: string; message: string }[] }) {
  if (!message) return null;
  const more = (details ?? []).filter((d) => !message.includes(d.path ? `${d.path}: ${d.message}` : d.message));
  return (
    <div class="note note-error" role="alert">
      {message}
      {more.length > 0 && (
        <ul class="details">
          {more.map((d) => (
            <li key={d.path + d.message}>
              {fieldPath(d.path) ? <code>{fieldPath(d.path)}</code> : "the request"}: {d.message}
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

/** The document's title for the page shown: `Runs · Shop · svc`. */
export function useDocumentTitle(...parts: (string | null | undefined)[]): void {
  const text = [...parts.filter((p) => p), "svc"].join(" · ");
  useEffect(() => {
    document.title = text;
  }, [text]);
}

/** A page's <h1>, which also names the page in the document's title (with `context`, e.g. the project). */
export function PageTitle({ title, context, children }: { title: string; context?: string | null; children?: ComponentChildren }) {
  useDocumentTitle(title, context);
  return <h1 class="page-title">{children ?? title}</h1>;
}

/** A card; `level` 1 makes its title the page's heading (a record's own page). */
export function Card({
  title,
  actions,
  children,
  level = 2,
}: {
  title?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  level?: 1 | 2;
}) {
  return (
    <section class="card">
      {(title || actions) && (
        <header class="card-head">
          {title && (level === 1 ? <h1 class="card-title">{title}</h1> : <h2>{title}</h2>)}
          {actions && <div class="row">{actions}</div>}
        </header>
      )}
      {children}
    </section>
  );
}

/**
 * A destructive button that asks once more, inline, before acting. Asking moves the focus to "Cancel"; cancelling
 * (or Escape) brings it back to the button.
 */
export function ConfirmButton({
  label,
  question,
  onConfirm,
  name,
}: {
  label: string;
  question: string;
  onConfirm: () => void | Promise<void>;
  /** The button's accessible name when several on a page share a label ("Remove secret TOKEN" beside "Remove"). */
  name?: string;
}) {
  const [asking, setAsking] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const moved = useRef(false);
  useEffect(() => {
    if (!moved.current) return;
    (asking ? cancel : opener).current?.focus();
  }, [asking]);
  const ask = (v: boolean) => {
    moved.current = true;
    setAsking(v);
  };
  if (!asking) {
    return (
      <button type="button" class="btn btn-danger-quiet" ref={opener} aria-label={name} onClick={() => ask(true)}>
        {label}
      </button>
    );
  }
  return (
    <span
      class="confirm"
      role="group"
      aria-label={question}
      onKeyDown={(e) => {
        if (e.key === "Escape") ask(false);
      }}
    >
      <span>{question}</span>
      <button
        type="button"
        class="btn btn-danger"
        onClick={async () => {
          setAsking(false);
          await onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" class="btn" ref={cancel} onClick={() => ask(false)}>
        Cancel
      </button>
    </span>
  );
}

/** "1 run", "2 runs": a count with its word. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

const DAY: Intl.DateTimeFormatOptions = { year: "numeric", month: "short", day: "numeric" };

export function when(iso: string | null | undefined, seconds = false): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return `${d.toLocaleDateString(undefined, DAY)} ${d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", ...(seconds ? { second: "2-digit" } : {}) })}`;
}

/** How long ago, for a glance ("just now", "5 min ago", "3 h ago", "2 days ago"); older than a week: the date. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const s = Math.max(0, Math.round((now - new Date(iso).getTime()) / 1000));
  if (s < 45) return "just now";
  if (s < 3600) return `${Math.max(1, Math.round(s / 60))} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  const days = Math.round(s / 86_400);
  if (days < 7) return `${days} day${days === 1 ? "" : "s"} ago`;
  return new Date(iso).toLocaleDateString(undefined, DAY);
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
        <a key={i.id} href={i.href} class={i.id === active ? "tab active" : "tab"} aria-current={i.id === active ? "page" : undefined}>
          {i.label}
        </a>
      ))}
    </nav>
  );
}

export const inputValue = (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement }) => e.currentTarget.value;

/** How a copy ended: on the clipboard, or left selected on the page for the person to copy by hand. */
export type CopyResult = "copied" | "selected";

/**
 * Copies `text` to the clipboard. `navigator.clipboard` exists only in secure contexts (HTTPS, localhost), so on
 * plain HTTP of another host (http://svc.lan:8080) this falls back to copying a selection with
 * `document.execCommand("copy")`. When that fails too, the contents of `source` (the element showing the text)
 * are left selected and the result is "selected": the caller tells the person to press Ctrl+C / ⌘C.
 */
export async function copyText(text: string, source?: Element | null): Promise<CopyResult> {
  if (typeof navigator.clipboard?.writeText === "function") {
    try {
      await navigator.clipboard.writeText(text);
      return "copied";
    } catch {
      // Refused (no permission, document not focused): try the selection below.
    }
  }
  if (copyBySelection(text)) return "copied";
  if (source) selectContents(source);
  return "selected";
}

/** Copies through a hidden text field: exactly `text`, whatever the page shows around it. */
function copyBySelection(text: string): boolean {
  const active = document.activeElement;
  const buffer = document.createElement("textarea");
  buffer.value = text;
  buffer.readOnly = true;
  buffer.className = "copy-buffer";
  buffer.setAttribute("aria-hidden", "true");
  buffer.tabIndex = -1;
  document.body.appendChild(buffer);
  let ok = false;
  try {
    buffer.select();
    buffer.setSelectionRange(0, text.length);
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  } finally {
    buffer.remove();
    if (active instanceof HTMLElement) active.focus();
  }
  return ok;
}

function selectContents(el: Element): void {
  const selection = window.getSelection();
  if (!selection) return;
  const range = document.createRange();
  range.selectNodeContents(el);
  selection.removeAllRanges();
  selection.addRange(range);
}

/** Text to copy (a key, a command, a link) with its copy button, which says whether the copy worked. */
export function CopyBlock({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<CopyResult | null>(null);
  const shown = useRef<HTMLElement>(null);
  useEffect(() => setState(null), [text]);
  return (
    <div class="copyblock-wrap">
      <div class="copyblock">
        <pre>
          <code ref={shown}>{text}</code>
        </pre>
        <button type="button" class="btn" aria-label={label} onClick={async () => setState(await copyText(text, shown.current))}>
          {state === "copied" ? "Copied" : "Copy"}
        </button>
      </div>
      {state === "selected" && (
        <p class="copy-hint" role="status">
          The browser did not let this page copy. The text is selected: press <kbd>Ctrl+C</kbd> (<kbd>⌘C</kbd> on a Mac) to copy it.
        </p>
      )}
    </div>
  );
}
