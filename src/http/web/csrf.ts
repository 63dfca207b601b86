// CSRF defence for cookie-authenticated requests: a per-session token in X-CSRF-Token on every state-changing
// request, and a cross-site Origin refused outright.
export const CSRF_HEADER = "x-csrf-token";

/** The message of the 403 for a state change without the CSRF token (or from another site). */
export const CSRF_REFUSED = "the request lacks a valid CSRF token (X-CSRF-Token header)";

export function changesState(request: Request): boolean {
  return request.method !== "GET" && request.method !== "HEAD" && request.method !== "OPTIONS";
}

/** False when the browser says the request comes from another site than the one it is sent to. The public
 * base_url counts as this site too, for proxies that do not pass the original Host on. */
export function sameOrigin(request: Request, baseUrl?: string): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  const allowed = [request.headers.get("x-forwarded-host"), request.headers.get("host")];
  if (baseUrl) allowed.push(new URL(baseUrl).host);
  return allowed.includes(host);
}
