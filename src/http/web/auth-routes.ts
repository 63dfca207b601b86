// The routes only a person in a browser uses: session state, first-run setup, sign in/out, password setup.
import { z } from "zod";
import type { Core } from "../../core/context";
import { createSession, deleteSession, findSession, sessionProfile, switchSessionWorkspace } from "../../core/sessions/sessions";
import { anyUserExists, completePasswordSetup, describeSetupToken, firstRunSetup } from "../../core/sessions/setup";
import { checkPassword } from "../../core/sessions/sign-in";
import { Email, Password } from "../../manifest/define";
import { AppError } from "../../manifest/errors";
import { log } from "../../logging";
import { errorResponse, responseForError } from "../errors";
import { publicBaseUrl } from "../public-url";
import { requestState } from "../request-state";
import { clearedSessionCookie, sessionCookie, sessionToken } from "./cookies";
import { CSRF_REFUSED, sameOrigin } from "./csrf";
import { json, readJson } from "./json-body";
import { resolveSession } from "./session-resolver";
import type { LoginLimiter } from "./login-limiter";
import { SETUP_ELSEWHERE, setupAllowedHere } from "./setup-host";

export const WEB_PREFIX = "/api/v1/web";

const SetupBody = z.strictObject({ workspace: z.string().trim().min(1).max(200), name: z.string().trim().min(1).max(200), email: Email, password: Password });
const LoginBody = z.strictObject({ email: z.string().trim().min(1).max(320), password: z.string().min(1).max(1000) });
const PasswordSetupBody = z.strictObject({ token: z.string().min(1).max(200), password: Password });
const SwitchBody = z.strictObject({ workspace: z.string().trim().min(1).max(200) });

async function signedIn(core: Core, request: Request, userId: string, workspaceId: string, status = 200): Promise<Response> {
  const s = await createSession(core.db, userId, workspaceId);
  const session = await findSession(core.db, s.token);
  if (!session) throw new AppError("internal_error", "the new session could not be read back");
  const profile = await sessionProfile(core.db, session);
  return json(status, { ...profile, csrf_token: s.csrfToken }, { "set-cookie": sessionCookie(core.config, request, s.token, s.expiresAt) });
}

/** What the web application needs at start: set up or not, and who is signed in. */
async function state(core: Core, request: Request): Promise<Response> {
  const base = publicBaseUrl(core.config, request);
  if (!(await anyUserExists(core.db))) {
    const allowed = setupAllowedHere(core.config, request);
    return json(200, { setup_required: true, setup_allowed: allowed, ...(allowed ? {} : { setup_hint: SETUP_ELSEWHERE }), signed_in: false, base_url: base });
  }
  const token = sessionToken(request);
  const session = token ? await findSession(core.db, token) : null;
  if (!session) return json(200, { setup_required: false, signed_in: false, base_url: base });
  return json(200, { setup_required: false, signed_in: true, base_url: base, ...(await sessionProfile(core.db, session)), csrf_token: session.csrfToken });
}

async function setup(core: Core, request: Request): Promise<Response> {
  if (!sameOrigin(request, core.config.base_url)) return errorResponse("forbidden", "cross-site requests are refused");
  if (!setupAllowedHere(core.config, request)) return errorResponse("forbidden", SETUP_ELSEWHERE);
  const body = await readJson(request, SetupBody);
  if (!body.ok) return body.response;
  const created = await firstRunSetup(core.db, {
    workspaceName: body.value.workspace,
    name: body.value.name,
    email: body.value.email,
    password: body.value.password,
  });
  log.info("first-run setup done", { user_id: created.userId, workspace_id: created.workspaceId });
  return signedIn(core, request, created.userId, created.workspaceId, 201);
}

async function login(core: Core, limiter: LoginLimiter, request: Request): Promise<Response> {
  if (!sameOrigin(request, core.config.base_url)) return errorResponse("forbidden", "cross-site requests are refused");
  const body = await readJson(request, LoginBody);
  if (!body.ok) return body.response;
  const verdict = await limiter.attempt(requestState(request)?.ip ?? "unknown", body.value.email);
  if ("refuseForSeconds" in verdict) {
    const wait = verdict.refuseForSeconds;
    return errorResponse("rate_limited", `too many sign-in attempts from this address; retry after ${wait} s`, { headers: { "retry-after": String(wait) } });
  }
  if (verdict.delayMs > 0) await Bun.sleep(verdict.delayMs);
  const who = await checkPassword(core.db, body.value.email, body.value.password);
  if (!who) {
    log.info("sign-in refused", { ip: requestState(request)?.ip });
    return errorResponse("unauthorized", "wrong email or password");
  }
  return signedIn(core, request, who.userId, who.workspaceId);
}

async function logout(core: Core, request: Request): Promise<Response> {
  const session = await resolveSession(core, request);
  if (session === "csrf_failed") return errorResponse("forbidden", CSRF_REFUSED);
  if (session) await deleteSession(core.db, session.sessionId);
  return new Response(null, { status: 204, headers: { "set-cookie": clearedSessionCookie(core.config, request) } });
}

/** Switches the signed-in person's session to another of their workspaces (same-origin, CSRF token required). */
async function switchWorkspace(core: Core, request: Request): Promise<Response> {
  const session = await resolveSession(core, request);
  if (session === "csrf_failed") return errorResponse("forbidden", CSRF_REFUSED);
  if (!session) return errorResponse("unauthorized", "sign in first");
  const body = await readJson(request, SwitchBody);
  if (!body.ok) return body.response;
  const moved = await switchSessionWorkspace(core.db, session, body.value.workspace);
  if (!moved) return errorResponse("not_found", `no workspace ${body.value.workspace} of yours`);
  return json(200, { ...(await sessionProfile(core.db, moved)), csrf_token: moved.csrfToken });
}

async function setupTokenInfo(core: Core, request: Request): Promise<Response> {
  const token = new URL(request.url).searchParams.get("token") ?? "";
  const who = await describeSetupToken(core.db, token);
  return who ? json(200, who) : errorResponse("not_found", "this password-setup link is unknown, already used or expired");
}

async function setupPassword(core: Core, request: Request): Promise<Response> {
  if (!sameOrigin(request, core.config.base_url)) return errorResponse("forbidden", "cross-site requests are refused");
  const body = await readJson(request, PasswordSetupBody);
  if (!body.ok) return body.response;
  const who = await completePasswordSetup(core.db, body.value.token, body.value.password);
  return signedIn(core, request, who.userId, who.workspaceId);
}

/** Wraps a route so anything thrown becomes the JSON error shape. */
export function guarded(run: (request: Request) => Promise<Response>) {
  return async ({ request }: { request: Request }): Promise<Response> => {
    try {
      return await run(request);
    } catch (e) {
      return responseForError(e, requestState(request)?.id ?? "unknown");
    }
  };
}

export const authRoutes = (core: Core, limiter: LoginLimiter) => ({
  state: guarded((r) => state(core, r)),
  setup: guarded((r) => setup(core, r)),
  login: guarded((r) => login(core, limiter, r)),
  logout: guarded((r) => logout(core, r)),
  switchWorkspace: guarded((r) => switchWorkspace(core, r)),
  setupTokenInfo: guarded((r) => setupTokenInfo(core, r)),
  setupPassword: guarded((r) => setupPassword(core, r)),
});
