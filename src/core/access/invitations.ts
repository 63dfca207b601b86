// Invitations of people who already have an account: an admin invites, the person accepts or declines once
// signed in. Nothing of the account is shown to the inviting workspace, and no credential of it is issued.
import type { Db } from "../../db/database";
import type { ops } from "../../manifest";
import { AppError, conflict, forbidden, notFound } from "../../manifest/errors";
import { newId } from "../../security/ids";
import { canAdminister, type Role } from "../context";
import type { Handler } from "../handler";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { expectVersion } from "../versions";
import * as store from "./store";

type O = typeof ops;

/** Records an invitation inside the caller's transaction; a second one to the same workspace is a conflict. */
export async function inviteUser(
  trx: Db,
  input: { workspaceId: string; userId: string; role: Role; name: string; invitedBy: string; email: string },
): Promise<{ id: string; created_at: string; updated_at: string }> {
  const pending = await store.findInvitationOf(trx, input.workspaceId, input.userId);
  if (pending) throw conflict(`${input.email} is already invited to this workspace`);
  const t = nowIso();
  const id = newId("inv");
  await store.insertInvitation(trx, {
    id,
    workspace_id: input.workspaceId,
    user_id: input.userId,
    role: input.role,
    name: input.name,
    invited_by: input.invitedBy,
    created_at: t,
    updated_at: t,
  });
  return { id, created_at: t, updated_at: t };
}

/** Who sent an invitation, as both lists show it (null once that account is gone). */
function inviter(r: { inviter_name: string | null; inviter_email: string | null }): { name: string; email: string } | null {
  return r.inviter_name !== null && r.inviter_email !== null ? { name: r.inviter_name, email: r.inviter_email } : null;
}

export const listInvitations: Handler<O["listInvitations"]> = async ({ core, principal }, { query }) => {
  return fetchPage(store.invitationsToQuery(core.db, principal.userId), "i", query, (r) => ({
    id: r.id,
    workspace: { id: r.workspace_id, name: r.workspace_name, slug: r.workspace_slug },
    role: r.role,
    invited_by: inviter(r),
    created_at: r.created_at,
  }));
};

export const acceptInvitation: Handler<O["acceptInvitation"]> = async ({ core, principal }, { params }) => {
  const joined = await core.db.transaction().execute(async (trx) => {
    const inv = await store.findInvitationTo(trx, principal.userId, params.invitationId);
    if (!inv) throw notFound("invitation");
    const t = nowIso();
    await store.insertMembershipIfAbsent(trx, { workspace_id: inv.workspace_id, user_id: principal.userId, role: inv.role, created_at: t, updated_at: t });
    await store.deleteInvitation(trx, inv.id);
    const m = await store.findMembership(trx, inv.workspace_id, principal.userId);
    if (!m) throw new AppError("internal_error", "the membership of an accepted invitation is missing");
    return { workspace: { id: inv.workspace_id, name: inv.name, slug: inv.slug }, role: m.role };
  });
  core.keys.invalidate();
  return joined;
};

export const declineInvitation: Handler<O["declineInvitation"]> = async ({ core, principal }, { params }) => {
  if (!(await store.deleteInvitationTo(core.db, principal.userId, params.invitationId))) throw notFound("invitation");
};

// The workspace's side: owners and admins see the invitations it has sent and cancel a mistaken one. The list shows
// what the inviter gave (the address and the name), never anything of the invited account.
const toWorkspaceInvitation = (r: {
  id: string;
  email: string;
  name: string;
  role: Role;
  created_at: string;
  updated_at: string;
  inviter_name: string | null;
  inviter_email: string | null;
}) => ({ id: r.id, email: r.email, name: r.name, role: r.role, invited_by: inviter(r), created_at: r.created_at, updated_at: r.updated_at });

export const listWorkspaceInvitations: Handler<O["listWorkspaceInvitations"]> = async ({ core, principal }, { query }) => {
  if (!canAdminister(principal)) throw forbidden("only owners and admins can see the workspace's invitations");
  return fetchPage(store.invitationsFromQuery(core.db, principal.workspaceId), "i", query, toWorkspaceInvitation);
};

export const getWorkspaceInvitation: Handler<O["getWorkspaceInvitation"]> = async ({ core, principal }, { params }) => {
  if (!canAdminister(principal)) throw forbidden("only owners and admins can see the workspace's invitations");
  const row = await store.invitationsFromQuery(core.db, principal.workspaceId).where("i.id", "=", params.invitationId).executeTakeFirst();
  if (!row) throw notFound("invitation");
  return toWorkspaceInvitation(row);
};

export const cancelInvitation: Handler<O["cancelInvitation"]> = async (ctx, { params }) => {
  const { core, principal } = ctx;
  if (!canAdminister(principal)) throw forbidden("only owners and admins can cancel invitations");
  await core.db.transaction().execute(async (trx) => {
    const inv = await store.findInvitationFrom(trx, principal.workspaceId, params.invitationId);
    // Accepted and declined invitations are deleted, so they are not found here either.
    if (!inv) throw notFound("invitation");
    // As with adding and removing owners: only an owner undoes an owner's decision about who becomes one.
    if (inv.role === "owner" && principal.role !== "owner") throw forbidden("only owners can cancel an invitation to the owner role");
    // Checked inside the transaction, so a change made meanwhile cannot slip between the check and the delete.
    expectVersion(ctx, inv, "invitation");
    await store.deleteInvitation(trx, params.invitationId);
  });
};
