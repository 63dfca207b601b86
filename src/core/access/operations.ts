// whoami, the caller's keys, and workspace members.
import type { ops } from "../../manifest";
import { log } from "../../logging";
import { conflict, forbidden, invalid, notFound } from "../../manifest/errors";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { fetchPage, toPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import { inviteUser } from "./invitations";
import { assistantProvider } from "../assistant/operations";
import * as store from "./store";
import { addToWorkspace, createApiKey, findUserByEmail, issueSetupToken, prepareMember, removeMembership, revokeKeyById } from "./users";

type O = typeof ops;

export const whoami: Handler<O["whoami"]> = async ({ core, principal }) => {
  const user = await store.userSummary(core.db, principal.userId);
  const ws = await store.workspaceSummary(core.db, principal.workspaceId);
  const key = principal.keyId ? await store.keySummary(core.db, principal.keyId) : undefined;
  const provider = assistantProvider(core);
  const assistant = typeof provider === "string" ? { available: false, problem: provider } : { available: true, problem: null };
  return { user, workspace: ws, role: principal.role, key: key ?? null, assistant };
};

export const listKeys: Handler<O["listKeys"]> = async ({ core, principal }, { query }) => {
  return fetchPage(store.keysQuery(core.db, principal.workspaceId, principal.userId), "api_keys", query, (r) => ({
    ...r,
    last_used_at: core.keys.pendingLastUsedAt(r.id) ?? r.last_used_at,
  }));
};

/** Session-only (the manifest says so): the HTTP layer refuses it to a key before it gets here. */
export const createKey: Handler<O["createKey"]> = async ({ core, principal }, { body }) => {
  const expiresAt = body.expires_at ? new Date(body.expires_at).toISOString() : null;
  if (expiresAt !== null && expiresAt <= nowIso()) {
    throw invalid("expires_at must be in the future", [{ path: "body.expires_at", message: "must be in the future" }]);
  }
  const created = await createApiKey(core.db, { userId: principal.userId, workspaceId: principal.workspaceId, name: body.name, expiresAt });
  core.keys.invalidate();
  log.info("key created", { key_id: created.id, prefix: created.prefix, user_id: principal.userId });
  return created;
};

export const getKey: Handler<O["getKey"]> = async ({ core, principal }, { params }) => {
  const key = await store.ownKey(core.db, principal.workspaceId, principal.userId, params.keyId);
  if (!key) throw notFound("key");
  return { ...key, last_used_at: core.keys.pendingLastUsedAt(key.id) ?? key.last_used_at };
};

export const revokeKey: Handler<O["revokeKey"]> = async (ctx, { params }) => {
  const { core, principal } = ctx;
  const key = await store.findKeyInWorkspace(core.db, principal.workspaceId, params.keyId);
  if (!key) throw notFound("key");
  const expected = expectVersion(ctx, key, "key");
  const done = await revokeKeyById(core.db, params.keyId, principal.userId, expected);
  core.keys.invalidate();
  if (!done) throw staleVersion("key", (await store.findKeyInWorkspace(core.db, principal.workspaceId, params.keyId)) ?? key);
};

async function memberRecord(ctx: OpContext, userId: string) {
  const row = await store.findMember(ctx.core.db, ctx.principal.workspaceId, userId);
  if (!row) throw notFound("member");
  return row;
}

export const getMember: Handler<O["getMember"]> = async (ctx, { params }) => memberRecord(ctx, params.userId);

/** A membership's version: the member's user id and the membership's updated_at. */
const memberVersion = (userId: string, m: { updated_at: string }) => ({ id: userId, updated_at: m.updated_at });

export const listMembers: Handler<O["listMembers"]> = async ({ core, principal }, { query }) => {
  const rows = await store.membersAfter(core.db, principal.workspaceId, query);
  return toPage(rows, query.limit, ({ id: _id, ...r }) => r);
};

export const addMember: Handler<O["addMember"]> = async (ctx, { body }) => {
  const { core, principal } = ctx;
  if (!canAdminister(principal)) throw forbidden("only owners and admins can add members");
  if (body.role === "owner" && principal.role !== "owner") throw forbidden("only owners can add owners");
  const name = body.name ?? body.email.split("@")[0] ?? body.email;
  const member = await prepareMember({ email: body.email, name, role: body.role });
  // One transaction: the user, the membership and the setup link (or the invitation) exist together or not at
  // all, and the "already a member" check cannot race another add of the same email.
  const added = await core.db.transaction().execute(async (trx) => {
    const existing = await findUserByEmail(trx, member.email);
    if (!existing) {
      const { userId } = await addToWorkspace(trx, principal.workspaceId, member);
      return { kind: "member" as const, userId, setupToken: await issueSetupToken(trx, userId) };
    }
    // Someone who already has an account (perhaps invited elsewhere and not set up yet): no credential of theirs
    // is issued or touched here, and they join only by accepting.
    const m = await store.findMembership(trx, principal.workspaceId, existing.id);
    if (m) throw conflict(`${member.email} is already a member of this workspace`);
    return {
      kind: "invited" as const,
      invitation: await inviteUser(trx, {
        workspaceId: principal.workspaceId,
        userId: existing.id,
        role: body.role,
        name,
        invitedBy: principal.userId,
        email: member.email,
      }),
    };
  });
  if (added.kind === "invited") {
    const inv = added.invitation;
    return {
      user_id: null,
      email: member.email,
      name,
      role: body.role,
      created_at: inv.created_at,
      updated_at: inv.updated_at,
      status: "invited" as const,
      invitation_id: inv.id,
      setup_url: null,
    };
  }
  core.keys.invalidate();
  const record = await memberRecord(ctx, added.userId);
  return { ...record, status: "member" as const, invitation_id: null, setup_url: `${ctx.publicUrl()}/setup-password?token=${added.setupToken}` };
};

export const updateMember: Handler<O["updateMember"]> = async (ctx, { params, body }) => {
  const { core, principal } = ctx;
  if (!canAdminister(principal)) throw forbidden("only owners and admins can change roles");
  const current = await memberRecord(ctx, params.userId);
  if ((current.role === "owner" || body.role === "owner") && principal.role !== "owner") {
    throw forbidden("only owners can grant or take the owner role");
  }
  const expected = expectVersion(ctx, memberVersion(params.userId, current), "member");
  await core.db.transaction().execute(async (trx) => {
    if (current.role === "owner" && body.role !== "owner" && (await store.countOwners(trx, principal.workspaceId)) <= 1) {
      throw conflict("the last owner of a workspace must stay an owner");
    }
    const at = nextStamp(current.updated_at);
    if (!(await store.setMembershipRole(trx, principal.workspaceId, params.userId, body.role, at, expected))) {
      throw staleVersion("member", memberVersion(params.userId, current));
    }
  });
  core.keys.invalidate();
  return memberRecord(ctx, params.userId);
};

export const removeMember: Handler<O["removeMember"]> = async (ctx, { params }) => {
  const { core, principal } = ctx;
  if (!canAdminister(principal)) throw forbidden("only owners and admins can remove members");
  const current = await memberRecord(ctx, params.userId);
  if (current.role === "owner" && principal.role !== "owner") throw forbidden("only owners can remove owners");
  // The version is checked inside removal's transaction, so a role change made meanwhile is not missed.
  await removeMembership(core.db, principal.workspaceId, params.userId, (m) => void expectVersion(ctx, memberVersion(params.userId, m), "member"));
  core.keys.invalidate();
};
