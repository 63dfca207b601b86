// Who is calling: an API key (Authorization: Bearer) or, for the web application, a session cookie.
import type { Core, Principal, Trigger } from "../core/context";

/** Resolves a web session; provided by the web application. Returns null when there is none. */
export type SessionResolver = (request: Request) => Promise<Principal | null | "csrf_failed">;

function triggerFrom(request: Request): Trigger {
  const ua = request.headers.get("user-agent") ?? "";
  if (ua.startsWith("svc-cli/")) return "cli";
  if (ua.startsWith("svc-mcp/")) return "mcp";
  return "api";
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or null. */
export function bearerToken(request: Request): string | null {
  const h = request.headers.get("authorization");
  if (!h || h.length < 8 || h.slice(0, 7).toLowerCase() !== "bearer ") return null;
  const token = h.slice(7).trim();
  return token === "" || /\s/.test(token) ? null : token;
}

export async function authenticate(core: Core, request: Request, sessions?: SessionResolver): Promise<Principal | null | "csrf_failed"> {
  const token = bearerToken(request);
  if (token !== null) {
    const key = await core.keys.verify(token);
    if (!key) return null;
    return { userId: key.userId, workspaceId: key.workspaceId, role: key.role, via: "key", keyId: key.keyId, trigger: triggerFrom(request) };
  }
  if (request.headers.has("authorization")) return null;
  return sessions ? sessions(request) : null;
}
