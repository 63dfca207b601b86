// What a save answered 412 precondition_failed shows: the record was changed elsewhere since this page read it.
// It lists what the other change did (field by field, against the version this page started from) and lets the
// person reload (dropping their edits) or overwrite (saving their edits over the new version, still guarded).
import { useId, useRef, useState } from "preact/hooks";
import { ApiError, versionOf } from "./api";

/** True when a save was refused because the record changed since it was read. */
export const isStale = (e: unknown): boolean => e instanceof ApiError && e.status === 412;

const shown = (v: unknown) => {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
};

/** The fields whose value differs between two versions of a record (its bookkeeping left out). */
export function changedFields(before: Record<string, unknown>, now: Record<string, unknown>): string[] {
  const skip = new Set(["updated_at", "last_run", "created_at"]);
  return Object.keys(now).filter((k) => !skip.has(k) && JSON.stringify(before[k]) !== JSON.stringify(now[k]));
}

export function StaleEdit({
  noun,
  before,
  now,
  onReload,
  onOverwrite,
}: {
  noun: string;
  before: Record<string, unknown>;
  now: Record<string, unknown>;
  onReload: () => void;
  onOverwrite: () => void;
}) {
  const changed = changedFields(before, now);
  return (
    <div class="note note-error" role="alertdialog" aria-labelledby="stale-edit-title">
      <h3 id="stale-edit-title">This {noun} was changed by someone else since you opened it</h3>
      {changed.length > 0 ? <ChangedFields changed={changed} now={now} /> : <p>Only its version changed.</p>}
      <div class="row">
        <button type="button" class="btn" onClick={onReload}>
          Reload (discard my edits)
        </button>
        <button type="button" class="btn btn-primary" onClick={onOverwrite}>
          Overwrite with my edits
        </button>
      </div>
    </div>
  );
}

/** Each changed field with its value now, as both notices list them. */
function ChangedFields({ changed, now }: { changed: string[]; now: Record<string, unknown> }) {
  return (
    <ul class="details" data-testid="stale-changes">
      {changed.map((k) => (
        <li key={k}>
          <code>{k}</code> is now {shown(now[k])}
        </li>
      ))}
    </ul>
  );
}

/**
 * A removal (or revocation, cancellation) refused as stale: the record changed since this page showed it, so it
 * says what changed and offers only a reload, to look again before doing it.
 */
export function StaleNotice({
  noun,
  verb,
  before,
  now,
  onReload,
}: {
  noun: string;
  verb: string;
  before: Record<string, unknown>;
  now: Record<string, unknown>;
  onReload: () => void;
}) {
  const title = useId();
  const changed = changedFields(before, now);
  return (
    <div class="note note-error" role="alertdialog" aria-labelledby={title}>
      <h3 id={title}>
        This {noun} was changed elsewhere since you opened this page: reload it before you {verb} it
      </h3>
      {changed.length > 0 && <ChangedFields changed={changed} now={now} />}
      <div class="row">
        <button type="button" class="btn btn-primary" onClick={onReload}>
          Reload
        </button>
      </div>
    </div>
  );
}

/**
 * Guards the saves of one record's editor: each save is made from the version shown (its ETag as If-Match, learnt
 * by one read when the record came from a list), and a 412 opens StaleEdit with what changed instead of an error.
 * `shown` is the record the form started from; `read` reads it afresh.
 */
export function useStaleGuard<T extends { id: string; updated_at: string }>(shown: T | null, read: () => Promise<T>) {
  const tags = useRef(new Map<string, string>());
  const [stale, setStale] = useState<T | null>(null);
  if (shown) {
    const held = versionOf(shown);
    if (held) tags.current.set(shown.updated_at, held);
  }
  /** The tag of the shown version; a record that has changed since it was shown gets one that matches nothing. */
  const tagOfShown = async (): Promise<string> => {
    if (!shown) return '"none"';
    const known = tags.current.get(shown.updated_at);
    if (known) return known;
    const fresh = await read();
    const tag = fresh.updated_at === shown.updated_at ? versionOf(fresh) : undefined;
    if (tag) tags.current.set(shown.updated_at, tag);
    return tag ?? '"changed-since-shown"';
  };
  const attempt = async <R,>(put: (ifMatch: string) => Promise<R>, tag: string): Promise<R | null> => {
    try {
      const saved = await put(tag);
      setStale(null);
      return saved;
    } catch (err) {
      if (!isStale(err)) throw err;
      setStale(await read());
      return null;
    }
  };
  return {
    stale,
    /** Saves from the shown version; null when it was refused as stale (the dialog is then open). */
    save: async <R,>(put: (ifMatch: string) => Promise<R>): Promise<R | null> => attempt(put, await tagOfShown()),
    /** Saves the edits over the version the dialog showed (still guarded: a newer change opens the dialog again). */
    overwrite: async <R,>(put: (ifMatch: string) => Promise<R>): Promise<R | null> => {
      const now = stale;
      if (!now) return null;
      return attempt(put, versionOf(now) ?? '"unknown"');
    },
    dismiss: () => setStale(null),
  };
}
