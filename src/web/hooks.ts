// Loading data for a page, and polling it while something is still in progress (runs, generations).
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

const MAX_POLL_MS = 10_000;

export interface Loaded<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Loads with `fetcher` when `key` changes; `pollMs(data)` > 0 reloads after that many ms (live updates). */
export function useLoad<T>(fetcher: () => Promise<T>, key: string, pollMs?: (data: T) => number): Loaded<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const fetchRef = useRef(fetcher);
  fetchRef.current = fetcher;
  const generation = useRef(0);

  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const d = await fetchRef.current();
      if (mine !== generation.current) return;
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
  useEffect(() => {
    polls.current = 0;
  }, [key]);
  const base = data !== null && pollMs ? pollMs(data) : 0;
  useEffect(() => {
    if (base <= 0) {
      polls.current = 0;
      return;
    }
    const delay = Math.min(base * (1 + Math.floor(polls.current / 10)), MAX_POLL_MS);
    const t = setTimeout(() => {
      polls.current++;
      void reload();
    }, delay);
    return () => clearTimeout(t);
  }, [data, base]);

  return { data, error, loading, reload };
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
