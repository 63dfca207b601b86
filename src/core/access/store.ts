// Workspaces, users, memberships, keys and invitations: every query on access's tables, typed by the schema.
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { ApiKeyTable, DB, InvitationTable, MembershipTable, UserTable, WorkspaceTable } from "../../db/schema";
import { afterCursor } from "../shared/pagination";

type Role = Selectable<MembershipTable>["role"];

// Workspaces

export async function findWorkspaceBySlug(db: Kysely<DB>, slug: string) {
  return db.selectFrom("workspaces").select("id").where("slug", "=", slug).executeTakeFirst();
}

/** The workspace as whoami shows it; it exists for as long as a principal is in it. */
export async function workspaceSummary(db: Kysely<DB>, id: string) {
  return db.selectFrom("workspaces").select(["id", "name", "slug"]).where("id", "=", id).executeTakeFirstOrThrow();
}

export async function insertWorkspace(db: Kysely<DB>, row: Insertable<WorkspaceTable>): Promise<void> {
  await db.insertInto("workspaces").values(row).execute();
}

// Users

/** The user with this email, given in the form it is stored (trimmed, lower case). */
export async function findUserByEmail(db: Kysely<DB>, email: string): Promise<Selectable<UserTable> | undefined> {
  return db.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst();
}

/** The user as whoami and the web profile show them; they exist for as long as a principal is theirs. */
export async function userSummary(db: Kysely<DB>, id: string) {
  return db.selectFrom("users").select(["id", "email", "name"]).where("id", "=", id).executeTakeFirstOrThrow();
}

export async function userSignInState(db: Kysely<DB>, id: string) {
  return db.selectFrom("users").select(["password_hash", "setup_token_expires_at"]).where("id", "=", id).executeTakeFirstOrThrow();
}

export async function userBySetupTokenHash(db: Kysely<DB>, tokenHash: string) {
  return db
    .selectFrom("users")
    .select(["id", "email", "name", "setup_token_hash", "setup_token_expires_at"])
    .where("setup_token_hash", "=", tokenHash)
    .executeTakeFirst();
}

export async function anyUserExists(db: Kysely<DB>): Promise<boolean> {
  return (await db.selectFrom("users").select("id").limit(1).executeTakeFirst()) !== undefined;
}

export async function insertUser(db: Kysely<DB>, row: Insertable<UserTable>): Promise<void> {
  await db.insertInto("users").values(row).execute();
}

export async function updateUser(db: Kysely<DB>, id: string, patch: Updateable<UserTable>): Promise<void> {
  await db.updateTable("users").set(patch).where("id", "=", id).execute();
}

/** Updates the user only while the setup token is still theirs; false when another request spent it first. */
export async function updateUserWithSetupToken(db: Kysely<DB>, id: string, tokenHash: string, patch: Updateable<UserTable>): Promise<boolean> {
  const res = await db.updateTable("users").set(patch).where("id", "=", id).where("setup_token_hash", "=", tokenHash).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// Memberships

export async function findMembership(db: Kysely<DB>, workspaceId: string, userId: string) {
  return db.selectFrom("memberships").select(["role", "updated_at"]).where("workspace_id", "=", workspaceId).where("user_id", "=", userId).executeTakeFirst();
}

/** A member of the workspace with what the members list shows of them. */
export async function findMember(db: Kysely<DB>, workspaceId: string, userId: string) {
  return db
    .selectFrom("memberships as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["u.id as user_id", "u.email", "u.name", "m.role", "m.created_at", "m.updated_at"])
    .where("m.workspace_id", "=", workspaceId)
    .where("m.user_id", "=", userId)
    .executeTakeFirst();
}

/** Up to limit+1 members after the cursor, newest first (a membership has no id of its own: the user's orders ties). */
export async function membersAfter(db: Kysely<DB>, workspaceId: string, query: { limit: number; cursor?: string }) {
  return db
    .selectFrom("memberships as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["u.id as user_id", "u.id", "u.email", "u.name", "m.role", "m.created_at", "m.updated_at"])
    .where("m.workspace_id", "=", workspaceId)
    .where(afterCursor("m", query.cursor, { createdAt: "m.created_at", id: "u.id" }))
    .orderBy("m.created_at", "desc")
    .orderBy("u.id", "desc")
    .limit(query.limit + 1)
    .execute();
}

/** The user's oldest membership. */
export async function firstMembership(db: Kysely<DB>, userId: string) {
  return db.selectFrom("memberships").select(["workspace_id", "role"]).where("user_id", "=", userId).orderBy("created_at", "asc").executeTakeFirst();
}

/** Every workspace the user is a member of, by name, with their role there. */
export async function workspacesOfUser(db: Kysely<DB>, userId: string) {
  return db
    .selectFrom("memberships as m")
    .innerJoin("workspaces as w", "w.id", "m.workspace_id")
    .select(["w.id", "w.name", "w.slug", "m.role"])
    .where("m.user_id", "=", userId)
    .orderBy("w.name")
    .orderBy("w.id")
    .execute();
}

/** The user's membership in the workspace named by id or slug. */
export async function membershipByWorkspaceIdOrSlug(db: Kysely<DB>, userId: string, workspace: string) {
  return db
    .selectFrom("memberships as m")
    .innerJoin("workspaces as w", "w.id", "m.workspace_id")
    .select(["w.id", "m.role"])
    .where("m.user_id", "=", userId)
    .where((eb) => eb.or([eb("w.id", "=", workspace), eb("w.slug", "=", workspace)]))
    .executeTakeFirst();
}

export async function countOwners(db: Kysely<DB>, workspaceId: string): Promise<number> {
  const owners = await db
    .selectFrom("memberships")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("workspace_id", "=", workspaceId)
    .where("role", "=", "owner")
    .executeTakeFirstOrThrow();
  return Number(owners.n);
}

export async function insertMembership(db: Kysely<DB>, row: Insertable<MembershipTable>): Promise<void> {
  await db.insertInto("memberships").values(row).execute();
}

/** Inserts the membership unless the user is already a member of that workspace (the existing one is kept). */
export async function insertMembershipIfAbsent(db: Kysely<DB>, row: Insertable<MembershipTable>): Promise<void> {
  await db
    .insertInto("memberships")
    .values(row)
    .onConflict((oc) => oc.columns(["workspace_id", "user_id"]).doNothing())
    .execute();
}

/** Changes a member's role (only while the membership still has `expected` as its updated_at, when given); false when nothing matched. */
export async function setMembershipRole(db: Kysely<DB>, workspaceId: string, userId: string, role: Role, at: string, expected?: string): Promise<boolean> {
  let q = db.updateTable("memberships").set({ role, updated_at: at }).where("workspace_id", "=", workspaceId).where("user_id", "=", userId);
  if (expected !== undefined) q = q.where("updated_at", "=", expected);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function deleteMembership(db: Kysely<DB>, workspaceId: string, userId: string): Promise<void> {
  await db.deleteFrom("memberships").where("workspace_id", "=", workspaceId).where("user_id", "=", userId).execute();
}

// API keys

/** The key as whoami shows it. */
export async function keySummary(db: Kysely<DB>, id: string) {
  return db.selectFrom("api_keys").select(["id", "name", "prefix"]).where("id", "=", id).executeTakeFirst();
}

/** Whose key it is and in which workspace. */
export async function findKey(db: Kysely<DB>, id: string) {
  return db.selectFrom("api_keys").select(["id", "user_id", "workspace_id"]).where("id", "=", id).executeTakeFirst();
}

export async function findKeyInWorkspace(db: Kysely<DB>, workspaceId: string, id: string) {
  return db.selectFrom("api_keys").select(["id", "updated_at"]).where("id", "=", id).where("workspace_id", "=", workspaceId).executeTakeFirst();
}

/** One of a member's keys in a workspace as the keys list shows it (never the hash). */
export async function ownKey(db: Kysely<DB>, workspaceId: string, userId: string, id: string) {
  return keysQuery(db, workspaceId, userId).where("id", "=", id).executeTakeFirst();
}

/** A member's keys in a workspace, for fetchPage (never the hash). */
export function keysQuery(db: Kysely<DB>, workspaceId: string, userId: string) {
  return db
    .selectFrom("api_keys")
    .select(["id", "name", "prefix", "created_at", "updated_at", "last_used_at", "expires_at", "revoked_at"])
    .where("workspace_id", "=", workspaceId)
    .where("user_id", "=", userId);
}

export async function insertApiKey(db: Kysely<DB>, row: Insertable<ApiKeyTable>): Promise<void> {
  await db.insertInto("api_keys").values(row).execute();
}

/** Marks a live key revoked (only if it is the owner's, when one is given); false when no live key matched. */
export async function revokeLiveKey(db: Kysely<DB>, id: string, at: string, ownerUserId?: string, expected?: string): Promise<boolean> {
  let q = db.updateTable("api_keys").set({ revoked_at: at, updated_at: at }).where("id", "=", id).where("revoked_at", "is", null);
  if (ownerUserId) q = q.where("user_id", "=", ownerUserId);
  if (expected !== undefined) q = q.where("updated_at", "=", expected);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// Invitations

export async function findInvitationOf(db: Kysely<DB>, workspaceId: string, userId: string) {
  return db.selectFrom("invitations").select("id").where("workspace_id", "=", workspaceId).where("user_id", "=", userId).executeTakeFirst();
}

/** An invitation addressed to the user, with the workspace it is to. */
export async function findInvitationTo(db: Kysely<DB>, userId: string, id: string) {
  return db
    .selectFrom("invitations as i")
    .innerJoin("workspaces as w", "w.id", "i.workspace_id")
    .select(["i.id", "i.role", "w.id as workspace_id", "w.name", "w.slug"])
    .where("i.id", "=", id)
    .where("i.user_id", "=", userId)
    .executeTakeFirst();
}

/** An invitation the workspace sent. */
export async function findInvitationFrom(db: Kysely<DB>, workspaceId: string, id: string) {
  return db.selectFrom("invitations").select(["id", "role", "updated_at"]).where("id", "=", id).where("workspace_id", "=", workspaceId).executeTakeFirst();
}

/** The invitations addressed to the user, with the workspace and who sent each, for fetchPage (alias "i"). */
export function invitationsToQuery(db: Kysely<DB>, userId: string) {
  return db
    .selectFrom("invitations as i")
    .innerJoin("workspaces as w", "w.id", "i.workspace_id")
    .leftJoin("users as u", "u.id", "i.invited_by")
    .select([
      "i.id",
      "i.role",
      "i.created_at",
      "w.id as workspace_id",
      "w.name as workspace_name",
      "w.slug as workspace_slug",
      "u.name as inviter_name",
      "u.email as inviter_email",
    ])
    .where("i.user_id", "=", userId);
}

/** The invitations the workspace sent, with the invited address and who sent each, for fetchPage (alias "i"). */
export function invitationsFromQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom("invitations as i")
    .innerJoin("users as invitee", "invitee.id", "i.user_id")
    .leftJoin("users as u", "u.id", "i.invited_by")
    .select(["i.id", "invitee.email", "i.name", "i.role", "i.created_at", "i.updated_at", "u.name as inviter_name", "u.email as inviter_email"])
    .where("i.workspace_id", "=", workspaceId);
}

export async function insertInvitation(db: Kysely<DB>, row: Insertable<InvitationTable>): Promise<void> {
  await db.insertInto("invitations").values(row).execute();
}

export async function deleteInvitation(db: Kysely<DB>, id: string): Promise<void> {
  await db.deleteFrom("invitations").where("id", "=", id).execute();
}

/** Deletes an invitation addressed to the user; false when there was none. */
export async function deleteInvitationTo(db: Kysely<DB>, userId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom("invitations").where("id", "=", id).where("user_id", "=", userId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
