// What a save answered 412 precondition_failed shows: the record was changed elsewhere since this page read it.
// It lists what the other change did (field by field, against the version this page started from) and lets the
// person reload (dropping their edits) or overwrite (saving their edits over the new version, still guarded).
import { ApiError } from "./api";

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
      {changed.length > 0 ? (
        <ul class="details" data-testid="stale-changes">
          {changed.map((k) => (
            <li key={k}>
              <code>{k}</code> is now {shown(now[k])}
            </li>
          ))}
        </ul>
      ) : (
        <p>Only its version changed.</p>
      )}
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
