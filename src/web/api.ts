// The web application's HTTP client: the same /api/v1/ops operations as every client, with the session cookie
// and the CSRF token instead of a key, plus the few /api/v1/web routes of a signed-in person.
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: { path: string; message: string }[] = []) {
    super(message);
  }
}

let csrfToken = "";
let onSignedOut: () => void = () => {};

export function setCsrfToken(token: string): void {
  csrfToken = token;
}

export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

async function send<T>(method: string, url: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET") headers["x-csrf-token"] = csrfToken;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, "invalid_response", `the server answered ${res.status} with something that is not JSON`);
  }
  if (!res.ok) {
    const e = (parsed ?? {}) as { error?: string; message?: string; details?: { path: string; message: string }[] };
    if (res.status === 401 && url.startsWith("/api/v1/ops")) onSignedOut();
    throw new ApiError(res.status, e.error ?? "error", e.message ?? `request failed (${res.status})`, e.details ?? []);
  }
  return parsed as T;
}

/** Calls an operation; `path` is below /api/v1/ops. */
export const op = <T>(method: "GET" | "POST" | "PATCH" | "DELETE", path: string, body?: unknown) => send<T>(method, `/api/v1/ops${path}`, body);

/** Calls a route of the web application itself; `path` is below /api/v1/web. */
export const web = <T>(method: "GET" | "POST", path: string, body?: unknown) => send<T>(method, `/api/v1/web${path}`, body);

export const enc = encodeURIComponent;

/** A query string from the set values of an object. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : "";
}
