// Loading data for a page, and following it while something is still in progress (runs, generations): by
// long-polls the server holds until the end, or by polling.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

const MAX_POLL_MS = 10_000;
/** How often a list follows changes made elsewhere (runs started by CI, say) while nothing in it is in progress. */
export const LIST_POLL_MS = 5_000;

/** Whether the page is shown: a hidden tab stops polling, and shown again it reloads at once. */
function usePageVisible(): boolean {
  const [visible, setVisible] = useState(() => typeof document === "undefined" || !document.hidden);
  useEffect(() => {
    const on = () => setVisible(!document.hidden);
    document.addEventListener("visibilitychange", on);
    return () => document.removeEventListener("visibilitychange", on);
  }, []);
  return visible;
}
/** A long-poll answered sooner than its wait less this, still in progress, was not held (the server could not wait). */
const UNHELD_MARGIN_MS = 250;
/**
 * After a record seen in progress ends in a way its engine completes a moment later (a cancelled run's stopped steps
 * are recorded after its status turned cancelled), it is read again this often, until it has not changed for
 * SETTLED_AFTER_MS (or SETTLE_AT_MOST_MS have passed since its end).
 */
const SETTLE_POLL_MS = 500;
const SETTLED_AFTER_MS = 3_000;
const SETTLE_AT_MOST_MS = 30_000;

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * Loads with `fetcher` when `key` changes; `pollMs(data)` > 0 reloads after that many ms (live updates). With
 * `longPoll`, the reload is sent at once and the fetcher is given that long in seconds to pass as `?wait`: the
 * server answers as soon as the record has ended, so the page shows the end at once; otherwise (or when the
 * server answered without waiting) it polls. Polling pauses while the page is hidden.
 *
 * `lateVersion(data)` names the version (its updated_at) of an ended record that may still change a moment after its
 * end, else null: one seen in progress here and then ended so is read again until it stops changing.
 */
export function useLoad<T>(
  fetcher: (waitSeconds: number) => Promise<T>,
  key: string,
  pollMs?: (data: T) => number,
  longPoll = false,
  lateVersion?: (data: T) => string | null,
): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const fetchRef = useRef(fetcher);
  fetchRef.current = fetcher;
  const generation = useRef(0);
  const held = useRef(true);

  const reload = useCallback(async (waitSeconds = 0) => {
    const mine = ++generation.current;
    const asked = Date.now();
    try {
      const d = await fetchRef.current(waitSeconds);
      if (mine !== generation.current) return;
      held.current = waitSeconds === 0 || Date.now() - asked >= waitSeconds * 1000 - UNHELD_MARGIN_MS;
      setData(d);
      setError(null);
    } catch (e) {
      if (mine === generation.current) setError((e as Error).message);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setLoading(true);
    setData(null);
    void reload();
    return () => {
      generation.current++;
    };
  }, [key]);

  // Polls slow down the longer something stays in progress: page views count against the workspace's
  // request budget like any client, so watching a long run must not use it up.
  const polls = useRef(0);
  const seenInProgress = useRef(false);
  const settling = useRef<{ version: string; changedAt: number; endedAt: number } | null>(null);
  useEffect(() => {
    polls.current = 0;
    seenInProgress.current = false;
    settling.current = null;
  }, [key]);
  const visible = usePageVisible();
  const base = data !== null && pollMs ? pollMs(data) : 0;
  const wasVisible = useRef(visible);
  useEffect(() => {
    const shownAgain = visible && !wasVisible.current;
    wasVisible.current = visible;
    if (base <= 0) {
      polls.current = 0;
      const delay = data === null ? 0 : settleDelay(lateVersion?.(data) ?? null);
      if (delay <= 0 || !visible) return;
      const t = setTimeout(() => void reload(), delay);
      return () => clearTimeout(t);
    }
    if (data !== null) {
      seenInProgress.current = true;
      settling.current = null;
    }
    if (!visible) return;
    if (shownAgain) {
      polls.current = 0;
      void reload();
      return;
    }
    // A page that asks for a slower pace than the cap (an idle dashboard) keeps it.
    const delay = Math.min(base * (1 + Math.floor(polls.current / 10)), Math.max(base, MAX_POLL_MS));
    const wait = longPoll && held.current ? Math.ceil(delay / 1000) : 0;
    const t = setTimeout(
      () => {
        polls.current++;
        void reload(wait);
      },
      wait > 0 ? 0 : delay,
    );
    return () => clearTimeout(t);
  }, [data, base, visible]);

  /** How long until the ended record is read again to see its late changes; 0 when it is not (any more). */
  function settleDelay(version: string | null): number {
    const now = Date.now();
    if (version === null) {
      settling.current = null;
      seenInProgress.current = false;
      return 0;
    }
    if (seenInProgress.current) {
      seenInProgress.current = false;
      settling.current = { version, changedAt: now, endedAt: now };
    }
    const s = settling.current;
    if (s === null) return 0;
    if (version !== s.version) {
      s.version = version;
      s.changedAt = now;
    }
    if (now - s.changedAt >= SETTLED_AFTER_MS || now - s.endedAt >= SETTLE_AT_MOST_MS) {
      settling.current = null;
      return 0;
    }
    return SETTLE_POLL_MS;
  }

  return { data, error, loading, reload: () => reload() };
}

/** Runs an action, keeping its error message for the form that started it. */
export function useAction(): {
  busy: boolean;
  error: string | null;
  details: { path: string; message: string }[];
  run: (fn: () => Promise<void>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [details, setDetails] = useState<{ path: string; message: string }[]>([]);
  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setDetails([]);
    try {
      await fn();
      return true;
    } catch (e) {
      setError((e as Error).message);
      const d = (e as { details?: { path: string; message: string }[] }).details;
      setDetails(Array.isArray(d) ? d : []);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, details, run, clear: () => setError(null) };
}

/**
 * A form over a loaded record: the record's fields as loaded, overlaid with the person's edits not saved yet. The
 * edits survive a reload of the record (after an upload beside the form, say), and typing before the page settled
 * loses nothing. `reset` drops them once saved.
 */
export function useEdits<T extends object>(loaded: T): { value: T; edit: (change: Partial<T>) => void; reset: () => void } {
  const [edits, setEdits] = useState<Partial<T>>({});
  return { value: { ...loaded, ...edits }, edit: (change) => setEdits({ ...edits, ...change }), reset: () => setEdits({}) };
}
