// Workspaces, users, memberships and keys as the administration commands and the web sign-in need them.
import type { Transaction } from "kysely";
import type { Db } from "../../db/database";
import type { DB } from "../../db/schema";
import { generateApiKey, hashApiKey } from "../../security/api-keys";
import { newId, randomBase62 } from "../../security/ids";
import { hashPassword } from "../../security/passwords";
import type { z } from "zod";
import { Email, Password, Slug } from "../../manifest/define";
import { AppError, conflict, invalid, notFound } from "../../manifest/errors";
import type { Role } from "../context";
import * as sessionStore from "../sessions/store";
import { nowIso } from "../shared/time";
import * as store from "./store";

export function slugify(text: string): string {
  const s = text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return s || "project";
}

export async function ensureWorkspace(db: Db, slug: string, name?: string): Promise<{ id: string; created: boolean }> {
  const found = await store.findWorkspaceBySlug(db, slug);
  if (found) return { id: found.id, created: false };
  const t = nowIso();
  const id = newId("wsp");
  await store.insertWorkspace(db, { id, slug, name: name ?? slug, created_at: t, updated_at: t });
  return { id, created: true };
}

export async function findUserByEmail(db: Db, email: string) {
  return store.findUserByEmail(db, email.trim().toLowerCase());
}

/** A user to create or update, checked and with the password already hashed (hashing is slow: never inside a
 * write transaction). */
export interface PreparedMember {
  email: string;
  name: string;
  role: Role;
  passwordHash: string | null;
}

/** A value checked with the manifest's schema for it: the same rule on every surface, a 400 naming the field. */
function checked<S extends z.ZodType>(schema: S, value: unknown, field: string, problem = (message: string) => message): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues[0]?.message ?? "invalid";
  throw invalid(problem(message), [{ path: field, message }]);
}

/** A workspace slug as the administration commands give it, checked as a project's slug is. */
export function checkWorkspaceSlug(slug: string): string {
  return checked(Slug, slug, "workspace", (m) => `"${slug}" is not a workspace slug: ${m}`);
}

/** A password as any surface sets it: at least 10 characters. */
export function checkNewPassword(password: string): string {
  return checked(Password, password, "password");
}

/** An email address as any surface gives it, in the form it is stored (trimmed, lower case). */
export function checkEmail(email: string): string {
  return checked(Email, email.trim().toLowerCase(), "email", () => `"${email}" is not an email address`);
}

export async function prepareMember(input: { email: string; name: string; role: Role; password?: string }): Promise<PreparedMember> {
  const email = checkEmail(input.email);
  const passwordHash = input.password === undefined ? null : await hashPassword(checkNewPassword(input.password));
  return { email, name: input.name, role: input.role, passwordHash };
}

/** Creates the user if needed and makes them a member of the workspace (creating it too if needed). */
export async function createUserInWorkspace(
  db: Db,
  input: { email: string; name: string; workspace: string; role: Role; password?: string },
): Promise<{ userId: string; workspaceId: string; createdUser: boolean }> {
  const member = await prepareMember(input);
  const workspace = checkWorkspaceSlug(input.workspace);
  return db.transaction().execute(async (trx) => {
    const ws = await ensureWorkspace(trx, workspace);
    return addToWorkspace(trx, ws.id, member);
  });
}

/** Creates the user if needed and makes them a member of the workspace, inside the caller's transaction. */
export async function addToWorkspace(
  trx: Transaction<DB>,
  workspaceId: string,
  input: PreparedMember,
): Promise<{ userId: string; workspaceId: string; createdUser: boolean }> {
  const { email, passwordHash } = input;
  const t = nowIso();
  let user = await findUserByEmail(trx, email);
  let createdUser = false;
  if (!user) {
    const id = newId("usr");
    await store.insertUser(trx, {
      id,
      email,
      name: input.name,
      password_hash: passwordHash,
      setup_token_hash: null,
      setup_token_expires_at: null,
      created_at: t,
      updated_at: t,
    });
    user = await findUserByEmail(trx, email);
    createdUser = true;
  } else if (passwordHash) {
    await store.updateUser(trx, user.id, { password_hash: passwordHash, updated_at: t });
  }
  if (!user) throw new AppError("internal_error", "user was not created");
  const member = await store.findMembership(trx, workspaceId, user.id);
  if (member) {
    if (member.role !== input.role) await store.setMembershipRole(trx, workspaceId, user.id, input.role, t);
  } else {
    await store.insertMembership(trx, { workspace_id: workspaceId, user_id: user.id, role: input.role, created_at: t, updated_at: t });
  }
  return { userId: user.id, workspaceId, createdUser };
}

export const SETUP_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;

/** A one-time password-setup token for a user who has no password yet; only its hash is stored. */
export async function issueSetupToken(trx: Db, userId: string): Promise<string> {
  const token = randomBase62(40);
  await store.updateUser(trx, userId, {
    setup_token_hash: hashApiKey(token),
    setup_token_expires_at: new Date(Date.now() + SETUP_TOKEN_TTL_MS).toISOString(),
    updated_at: nowIso(),
  });
  return token;
}

/**
 * `svc admin create-user`: the user (made a member), and a setup token when nobody can sign in as them yet —
 * a new user without a password, or an existing one who has neither a password nor a live link. A live link is
 * never replaced: it may have been handed out already.
 */
export async function createUserWithSetupToken(
  db: Db,
  input: { email: string; name: string; workspace: string; role: Role; password?: string },
  opts: { onlyFirst?: boolean } = {},
): Promise<{ userId: string; workspaceId: string; createdUser: boolean; setupToken: string | null; pendingLink: boolean } | null> {
  const member = await prepareMember(input);
  const workspace = checkWorkspaceSlug(input.workspace);
  return db.transaction().execute(async (trx) => {
    // onlyFirst: a first-start script's user, made only while the installation has none (null: nothing changed).
    if (opts.onlyFirst && (await store.anyUserExists(trx))) return null;
    const ws = await ensureWorkspace(trx, workspace);
    const added = await addToWorkspace(trx, ws.id, member);
    const user = await store.userSignInState(trx, added.userId);
    if (user.password_hash !== null) return { ...added, setupToken: null, pendingLink: false };
    if (user.setup_token_expires_at !== null && user.setup_token_expires_at > nowIso()) return { ...added, setupToken: null, pendingLink: true };
    return { ...added, setupToken: await issueSetupToken(trx, added.userId), pendingLink: false };
  });
}

/** Mints a key for a member; the full key is returned once and only its hash is stored. */
export async function createApiKey(
  db: Db,
  input: { userId: string; workspaceId: string; name: string; expiresAt: string | null },
): Promise<{ id: string; key: string; prefix: string; name: string; created_at: string; expires_at: string | null }> {
  const member = await store.findMembership(db, input.workspaceId, input.userId);
  if (!member) throw notFound("membership");
  if (input.expiresAt !== null && input.expiresAt <= nowIso()) throw invalid("expiry must be in the future");
  const { key, prefix, hash } = generateApiKey();
  const id = newId("key");
  const t = nowIso();
  await store.insertApiKey(db, {
    id,
    workspace_id: input.workspaceId,
    user_id: input.userId,
    name: input.name,
    prefix,
    hash,
    last_used_at: null,
    expires_at: input.expiresAt,
    revoked_at: null,
    created_at: t,
    updated_at: t,
  });
  return { id, key, prefix, name: input.name, created_at: t, expires_at: input.expiresAt };
}

export async function revokeKeyById(db: Db, keyId: string, ownerUserId?: string, expected?: string): Promise<boolean> {
  if (!(await store.revokeLiveKey(db, keyId, nowIso(), ownerUserId, expected))) {
    const exists = await store.findKey(db, keyId);
    if (!exists || (ownerUserId && exists.user_id !== ownerUserId)) throw notFound("key");
    // Already revoked: revoking is idempotent (unless it was to be revoked from a version it no longer has).
    return expected === undefined;
  }
  return true;
}

/** Removes a member; their keys stop working because verification requires the membership. */
export async function removeMembership(db: Db, workspaceId: string, userId: string, check?: (m: { role: string; updated_at: string }) => void): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const member = await store.findMembership(trx, workspaceId, userId);
    if (!member) throw notFound("member");
    check?.(member);
    if (member.role === "owner" && (await store.countOwners(trx, workspaceId)) <= 1) throw conflict("the last owner of a workspace cannot be removed");
    await store.deleteMembership(trx, workspaceId, userId);
    await sessionStore.deleteSessionsOf(trx, workspaceId, userId);
  });
}
