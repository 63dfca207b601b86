// Turns a request's session cookie into the principal acting, refusing state changes without the CSRF token.
import type { Core, Principal } from "../../core/context";
import { csrfMatches, findSession, type SessionRecord } from "../../core/sessions/sessions";
import type { SessionResolver } from "../auth";
import { sessionToken } from "./cookies";
import { changesState, CSRF_HEADER, sameOrigin } from "./csrf";

/** The request's live session, or "csrf_failed" when it changes state without the CSRF token from this site. */
export async function resolveSession(core: Core, request: Request): Promise<SessionRecord | null | "csrf_failed"> {
  const token = sessionToken(request);
  if (!token) return null;
  const session = await findSession(core.db, token);
  if (!session) return null;
  if (changesState(request) && (!sameOrigin(request, core.config.base_url) || !csrfMatches(session, request.headers.get(CSRF_HEADER)))) return "csrf_failed";
  return session;
}

export function sessionResolver(core: Core): SessionResolver {
  return async (request) => {
    const session = await resolveSession(core, request);
    if (session === null || session === "csrf_failed") return session;
    const principal: Principal = {
      userId: session.userId,
      workspaceId: session.workspaceId,
      role: session.role,
      via: "session",
      keyId: null,
      trigger: "web",
    };
    return principal;
  };
}
