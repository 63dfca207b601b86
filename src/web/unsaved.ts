// Unsaved edits are not lost by leaving: while an editor on the page holds edits not saved yet, a route change inside
// the app asks first (staying keeps the page and its edits), and closing or reloading the tab asks the browser's
// question (beforeunload).
import { useEffect, useRef } from "preact/hooks";

export const LEAVE_QUESTION = "This page has edits that are not saved. Leave it and lose them?";

/** Each mounted editor's question "do you hold unsaved edits?", asked at the moment of leaving. */
const editors = new Set<() => boolean>();

export function hasUnsavedEdits(): boolean {
  for (const dirty of editors) if (dirty()) return true;
  return false;
}

/**
 * Registers an editor while it is mounted: it holds unsaved edits while `now` differs from `saved` (compared as
 * JSON), read when the person leaves, so it is always current. `sending()` as a save is sent counts those edits as
 * saved from then on (a click away while the answer is on its way does not ask); `failed()` takes that back.
 */
export function useUnsavedEdits(now: unknown, saved: unknown): { sending: () => void; failed: () => void } {
  const latest = useRef({ now: "", saved: "" });
  latest.current = { now: JSON.stringify(now), saved: JSON.stringify(saved) };
  const sent = useRef<string | null>(null);
  useEffect(() => {
    const ask = () => latest.current.now !== latest.current.saved && latest.current.now !== sent.current;
    editors.add(ask);
    return () => {
      editors.delete(ask);
    };
  }, []);
  return {
    sending: () => {
      sent.current = latest.current.now;
    },
    failed: () => {
      sent.current = null;
    },
  };
}

/** Whether leaving the page now is fine: nothing unsaved, or the person chose to drop it. */
export function mayLeave(): boolean {
  return !hasUnsavedEdits() || confirm(LEAVE_QUESTION);
}

let settled = false;

/**
 * Marks the next route change as one the page makes itself once its edits are saved or moot (after a save that
 * renames, after a delete): it does not ask.
 */
export function leavingSettled(): void {
  settled = true;
}

/** Consumes the mark of leavingSettled. */
export function takeSettled(): boolean {
  const was = settled;
  settled = false;
  return was;
}

if (typeof window !== "undefined")
  addEventListener("beforeunload", (e) => {
    if (!hasUnsavedEdits()) return;
    e.preventDefault();
    // Older browsers show their question only when returnValue is set.
    (e as BeforeUnloadEvent).returnValue = "";
  });

/** Runs one save of an editor's edits: they count as saved once sent, and unsaved again when it fails or is refused (null). */
export async function savingEdits<R>(edits: { sending: () => void; failed: () => void }, save: () => Promise<R | null>): Promise<R | null> {
  edits.sending();
  try {
    const saved = await save();
    if (saved === null) edits.failed();
    return saved;
  } catch (err) {
    edits.failed();
    throw err;
  }
}
