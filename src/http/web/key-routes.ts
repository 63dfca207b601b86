// Key creation: only a signed-in person (session cookie + CSRF token) mints keys; a key cannot mint keys.
import { z } from "zod";
import { createApiKey } from "../../core/access/users";
import type { Core } from "../../core/context";
import { log } from "../../logging";
import { Name } from "../../manifest/define";
import { authenticate, type SessionResolver } from "../auth";
import { errorResponse } from "../errors";
import { guarded } from "./auth-routes";
import { CSRF_REFUSED } from "./csrf";
import { json, readJson } from "./json-body";

const CreateKeyBody = z.strictObject({
  name: Name,
  expires_at: z.iso.datetime({ offset: true }).nullable().optional().describe("When the key stops working; none when omitted"),
});

async function createKey(core: Core, sessions: SessionResolver, request: Request): Promise<Response> {
  const principal = await authenticate(core, request, sessions);
  if (principal === "csrf_failed") return errorResponse("forbidden", CSRF_REFUSED);
  if (!principal) return errorResponse("unauthorized", "sign in to create keys");
  if (principal.via !== "session") return errorResponse("forbidden", "keys are created by a signed-in user in the web application, not with a key");
  const body = await readJson(request, CreateKeyBody);
  if (!body.ok) return body.response;
  const expiresAt = body.value.expires_at ? new Date(body.value.expires_at).toISOString() : null;
  const created = await createApiKey(core.db, { userId: principal.userId, workspaceId: principal.workspaceId, name: body.value.name, expiresAt });
  core.keys.invalidate();
  log.info("key created", { key_id: created.id, prefix: created.prefix, user_id: principal.userId });
  return json(201, created);
}

export const keyRoutes = (core: Core, sessions: SessionResolver) => ({
  create: guarded((r) => createKey(core, sessions, r)),
});
