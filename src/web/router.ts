// Hash routing: the page is chosen by `#/…`, so the server needs only the entry page.
import { useEffect, useState } from "preact/hooks";

export function currentPath(): string {
  const h = location.hash.replace(/^#/, "");
  return h.startsWith("/") ? h : "/";
}

export function useHashPath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const on = () => setPath(currentPath());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return path;
}

export function navigate(path: string): void {
  location.hash = path;
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
      out[seg.slice(1)] = decodeURIComponent(val);
    } else if (seg !== val) return null;
  }
  return out;
}

/** The query part of the hash path as an object. */
export function hashQuery(path: string): URLSearchParams {
  const q = path.indexOf("?");
  return new URLSearchParams(q < 0 ? "" : path.slice(q + 1));
}
