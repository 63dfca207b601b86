// whoami, the caller's keys, and workspace members.
import { randomBase62 } from "../../security/ids";
import type { ops } from "../../manifest";
import { conflict, forbidden, notFound } from "../../manifest/errors";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { afterCursor, fetchPage, toPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { addToWorkspace, findUserByEmail, prepareMember, removeMembership, revokeKeyById } from "./users";
import { hashApiKey } from "../../security/api-keys";

type O = typeof ops;

export const whoami: Handler<O["whoami"]> = async ({ core, principal }) => {
  const user = await core.db.selectFrom("users").select(["id", "email", "name"]).where("id", "=", principal.userId).executeTakeFirstOrThrow();
  const ws = await core.db.selectFrom("workspaces").select(["id", "name", "slug"]).where("id", "=", principal.workspaceId).executeTakeFirstOrThrow();
  const key = principal.keyId
    ? await core.db.selectFrom("api_keys").select(["id", "name", "prefix"]).where("id", "=", principal.keyId).executeTakeFirst()
    : undefined;
  return { user, workspace: ws, role: principal.role, key: key ?? null };
};

export const listKeys: Handler<O["listKeys"]> = async ({ core, principal }, { query }) => {
  const q = core.db
    .selectFrom("api_keys")
    .select(["id", "name", "prefix", "created_at", "last_used_at", "expires_at", "revoked_at"])
    .where("workspace_id", "=", principal.workspaceId)
    .where("user_id", "=", principal.userId);
  return fetchPage(q, "api_keys", query, (r) => ({ ...r, last_used_at: core.keys.pendingLastUsedAt(r.id) ?? r.last_used_at }));
};

export const revokeKey: Handler<O["revokeKey"]> = async ({ core, principal }, { params }) => {
  const key = await core.db.selectFrom("api_keys").select("id").where("id", "=", params.keyId).where("workspace_id", "=", principal.workspaceId).executeTakeFirst();
  if (!key) throw notFound("key");
  await revokeKeyById(core.db, params.keyId, principal.userId);
  core.keys.invalidate();
};

async function memberRecord(ctx: OpContext, userId: string) {
  const row = await ctx.core.db
    .selectFrom("memberships as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["u.id as user_id", "u.email", "u.name", "m.role", "m.created_at"])
    .where("m.workspace_id", "=", ctx.principal.workspaceId)
    .where("m.user_id", "=", userId)
    .executeTakeFirst();
  if (!row) throw notFound("member");
  return row;
}

export const listMembers: Handler<O["listMembers"]> = async ({ core, principal }, { query }) => {
  const rows = await core.db
    .selectFrom("memberships as m")
    .innerJoin("users as u", "u.id", "m.user_id")
    .select(["u.id as user_id", "u.id", "u.email", "u.name", "m.role", "m.created_at"])
    .where("m.workspace_id", "=", principal.workspaceId)
    .where(afterCursor("m", query.cursor, { createdAt: "m.created_at", id: "u.id" }))
    .orderBy("m.created_at", "desc")
    .orderBy("u.id", "desc")
    .limit(query.limit + 1)
    .execute();
  return toPage(rows, query.limit, ({ id: _id, ...r }) => r);
};

const SETUP_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;

export const addMember: Handler<O["addMember"]> = async (ctx, { body }) => {
  const { core, principal } = ctx;
  if (!canAdminister(principal)) throw forbidden("only owners and admins can add members");
  if (body.role === "owner" && principal.role !== "owner") throw forbidden("only owners can add owners");
  const member = await prepareMember({ email: body.email, name: body.name ?? body.email.split("@")[0] ?? body.email, role: body.role });
  const token = randomBase62(40);
  // One transaction: the user, the membership and the setup link exist together or not at all, and the
  // "already a member" check cannot race another add of the same email.
  const { userId, setupToken } = await core.db.transaction().execute(async (trx) => {
    const existing = await findUserByEmail(trx, member.email);
    if (existing) {
      const m = await trx.selectFrom("memberships").select("role").where("workspace_id", "=", principal.workspaceId).where("user_id", "=", existing.id).executeTakeFirst();
      if (m) throw conflict(`${body.email} is already a member of this workspace`);
    }
    const { userId, createdUser } = await addToWorkspace(trx, principal.workspaceId, member);
    if (!createdUser && existing?.password_hash != null) return { userId, setupToken: null };
    await trx.updateTable("users").set({
      setup_token_hash: hashApiKey(token),
      setup_token_expires_at: new Date(Date.now() + SETUP_TOKEN_TTL_MS).toISOString(),
      updated_at: nowIso(),
    }).where("id", "=", userId).execute();
    return { userId, setupToken: token };
  });
  core.keys.invalidate();
  const setupUrl = setupToken === null
    ? null
    : `${ctx.publicUrl()}/setup-password?token=${setupToken}`;
  return { ...(await memberRecord(ctx, userId)), setup_url: setupUrl };
};

export const updateMember: Handler<O["updateMember"]> = async (ctx, { params, body }) => {
  const { core, principal } = ctx;
  if (!canAdminister(principal)) throw forbidden("only owners and admins can change roles");
  const current = await memberRecord(ctx, params.userId);
  if ((current.role === "owner" || body.role === "owner") && principal.role !== "owner") {
    throw forbidden("only owners can grant or take the owner role");
  }
  await core.db.transaction().execute(async (trx) => {
    if (current.role === "owner" && body.role !== "owner") {
      const owners = await trx.selectFrom("memberships").select((eb) => eb.fn.countAll<number>().as("n")).where("workspace_id", "=", principal.workspaceId).where("role", "=", "owner").executeTakeFirstOrThrow();
      if (Number(owners.n) <= 1) throw conflict("the last owner of a workspace must stay an owner");
    }
    await trx.updateTable("memberships").set({ role: body.role, updated_at: nowIso() }).where("workspace_id", "=", principal.workspaceId).where("user_id", "=", params.userId).execute();
  });
  core.keys.invalidate();
  return memberRecord(ctx, params.userId);
};

export const removeMember: Handler<O["removeMember"]> = async (ctx, { params }) => {
  const { core, principal } = ctx;
  if (!canAdminister(principal)) throw forbidden("only owners and admins can remove members");
  const current = await memberRecord(ctx, params.userId);
  if (current.role === "owner" && principal.role !== "owner") throw forbidden("only owners can remove owners");
  await removeMembership(core.db, principal.workspaceId, params.userId);
  core.keys.invalidate();
};
