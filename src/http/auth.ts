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

export function bearerToken(request: Request): string | null {
  const h = request.headers.get("authorization");
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? (m[1] ?? null) : null;
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
