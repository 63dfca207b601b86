// Hash routing: the page is chosen by `#/…`, so the server needs only the entry page.
import { useEffect, useState } from "preact/hooks";
import { leavingSettled, mayLeave, takeSettled } from "./unsaved";

export function currentPath(): string {
  const h = location.hash.replace(/^#/, "");
  return h.startsWith("/") ? h : "/";
}

const following = new Set<(path: string) => void>();

// One listener decides every route change: a page with unsaved edits asks before it is left, and staying puts its
// address back; the pages follow only the changes made.
if (typeof location !== "undefined") {
  addEventListener("hashchange", (e) => {
    if (!takeSettled() && !mayLeave()) {
      history.replaceState(history.state, "", (e as HashChangeEvent).oldURL);
      return;
    }
    const path = currentPath();
    for (const follow of following) follow(path);
  });
}

export function useHashPath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    following.add(setPath);
    setPath(currentPath());
    return () => {
      following.delete(setPath);
    };
  }, []);
  return path;
}

export function navigate(path: string, opts: { settled?: boolean } = {}): void {
  if (opts.settled) leavingSettled();
  location.hash = path;
}

/**
 * A path segment as it was meant: a link with a stray "%" (typed by hand, or cut short when pasted) cannot be decoded,
 * and then it stays as written, so its page says it found nothing instead of the whole application failing to draw.
 */
function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Matches "/p/:project/runs/:id" against a path; returns the decoded parameters or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const [pathname = "/"] = path.split("?");
  const p = pattern.split("/");
  const a = pathname.split("/");
  if (p.length !== a.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const seg = p[i] ?? "";
    const val = a[i] ?? "";
    if (seg.startsWith(":")) {
      if (!val) return null;
      out[seg.slice(1)] = decodedSegment(val);
    } else if (seg !== val) return null;
  }
  return out;
}

/** The query part of the hash path as an object. */
export function hashQuery(path: string): URLSearchParams {
  const q = path.indexOf("?");
  return new URLSearchParams(q < 0 ? "" : path.slice(q + 1));
}

/** The query of the current hash path, following changes (filters and paging kept in the URL). */
export function useHashQuery(): URLSearchParams {
  return hashQuery(useHashPath());
}

/**
 * Sets values in the query of the current hash path (empty ones are removed). `push` adds a history entry, so Back
 * returns to the state before; without it the entry is replaced (typing in a search field).
 */
export function setHashQuery(values: Record<string, string | null | undefined>, push = true): void {
  const path = currentPath();
  const [base = "/"] = path.split("?");
  const q = hashQuery(path);
  for (const [k, v] of Object.entries(values)) {
    if (v) q.set(k, v);
    else q.delete(k);
  }
  const text = q.toString();
  const next = `${base}${text ? `?${text}` : ""}`;
  if (next === path) return;
  if (push) {
    location.hash = next;
    return;
  }
  history.replaceState(history.state, "", `#${next}`);
  dispatchEvent(new HashChangeEvent("hashchange"));
}
