// The session cookie: its name, reading it from a request, and the Set-Cookie values that set and clear it.
import type { Config } from "../../../config/schema";
import { forwardedProto } from "../public-url";

export const SESSION_COOKIE = "svc_session";

export function sessionToken(request: Request): string | null {
  const header = request.headers.get("cookie");
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** HTTPS either directly or, when the proxy is trusted, as the proxy reports it. */
function servedOverHttps(config: Config, request: Request): boolean {
  if (new URL(request.url).protocol === "https:") return true;
  return forwardedProto(config, request) === "https";
}

export function sessionCookie(config: Config, request: Request, token: string, expiresAt: string): string {
  const secure = servedOverHttps(config, request) ? "; Secure" : "";
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax; Expires=${new Date(expiresAt).toUTCString()}${secure}`;
}

export function clearedSessionCookie(config: Config, request: Request): string {
  const secure = servedOverHttps(config, request) ? "; Secure" : "";
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${secure}`;
}
