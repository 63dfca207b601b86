// Turns a request's session cookie into the principal acting, refusing state changes without the CSRF token.
import type { Core, Principal } from "../../core/context";
import { csrfMatches, findSession } from "../../core/sessions/sessions";
import type { SessionResolver } from "../auth";
import { sessionToken } from "./cookies";
import { changesState, CSRF_HEADER, sameOrigin } from "./csrf";

export function sessionResolver(core: Core): SessionResolver {
  return async (request) => {
    const token = sessionToken(request);
    if (!token) return null;
    const session = await findSession(core.db, token);
    if (!session) return null;
    if (changesState(request) && (!sameOrigin(request, core.config.base_url) || !csrfMatches(session, request.headers.get(CSRF_HEADER)))) return "csrf_failed";
    const principal: Principal = {
      userId: session.userId, workspaceId: session.workspaceId, role: session.role, via: "session", keyId: null, trigger: "web",
    };
    return principal;
  };
}
