// Web sign-in sessions: created at sign-in, looked up by the hash of the cookie's token, deleted at sign-out.
import type { Db } from "../../db/database";
import { hashApiKey, sameDigest } from "../../security/api-keys";
import { newId, randomBase62 } from "../../security/ids";
import { AppError } from "../../manifest/errors";
import type { Role } from "../context";
import * as accessStore from "../access/store";
import { nowIso } from "../shared/time";
import * as store from "./store";

export const SESSION_TTL_MS = 14 * 24 * 3600 * 1000;

export interface SessionRecord {
  sessionId: string;
  userId: string;
  workspaceId: string;
  role: Role;
  csrfToken: string;
}

/** Opens a session; the token goes into the cookie and only its hash is stored. */
export async function createSession(db: Db, userId: string, workspaceId: string): Promise<{ token: string; csrfToken: string; expiresAt: string }> {
  const token = randomBase62(43);
  const csrfToken = randomBase62(32);
  const expiresAt = new Date(Date.now() + SESSION_TTL_MS).toISOString();
  await store.insertSession(db, {
    id: newId("ses"),
    token_hash: hashApiKey(token),
    user_id: userId,
    workspace_id: workspaceId,
    csrf_token: csrfToken,
    created_at: nowIso(),
    expires_at: expiresAt,
  });
  if (Math.random() < 0.05) await store.deleteSessionsExpiredBy(db, nowIso());
  return { token, csrfToken, expiresAt };
}

/** The live session of a token; requires the membership too, so a removed member's session ends at once. */
export async function findSession(db: Db, token: string): Promise<SessionRecord | null> {
  if (token.length === 0 || token.length > 100) return null;
  const row = await store.findSessionByTokenHash(db, hashApiKey(token));
  if (!row || row.expires_at <= nowIso()) return null;
  return { sessionId: row.id, userId: row.user_id, workspaceId: row.workspace_id, role: row.role, csrfToken: row.csrf_token };
}

export function csrfMatches(session: SessionRecord, presented: string | null): boolean {
  return presented !== null && sameDigest(session.csrfToken, presented);
}

export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await store.deleteSession(db, sessionId);
}

/** The workspace a person signs in to: their oldest membership. */
export async function firstMembership(db: Db, userId: string): Promise<{ workspaceId: string; role: Role } | null> {
  const m = await accessStore.firstMembership(db, userId);
  return m ? { workspaceId: m.workspace_id, role: m.role } : null;
}

/** What the web application shows about the signed-in person, with every workspace they can switch to. */
export async function sessionProfile(db: Db, s: SessionRecord) {
  const user = await accessStore.userSummary(db, s.userId);
  const workspaces = await accessStore.workspacesOfUser(db, s.userId);
  // A live session always has its membership (findSession joins it), so the current workspace is in the list.
  const current = workspaces.find((w) => w.id === s.workspaceId);
  if (!current) throw new AppError("internal_error", "the session's workspace is not among the person's memberships");
  return { user, workspace: { id: current.id, name: current.name, slug: current.slug }, role: s.role, workspaces };
}

/**
 * Moves a session to another workspace of the same person (by id or slug) and returns it as it now is; null
 * when they are not a member there: the caller answers 404, as for any resource of a workspace one is not in.
 */
export async function switchSessionWorkspace(db: Db, s: SessionRecord, workspace: string): Promise<SessionRecord | null> {
  const target = await accessStore.membershipByWorkspaceIdOrSlug(db, s.userId, workspace);
  if (!target) return null;
  await store.setSessionWorkspace(db, s.sessionId, target.id);
  return { ...s, workspaceId: target.id, role: target.role };
}
