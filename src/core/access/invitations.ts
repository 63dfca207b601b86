// Invitations of people who already have an account: an admin invites, the person accepts or declines once
// signed in. Nothing of the account is shown to the inviting workspace, and no credential of it is issued.
import type { Db } from "../../db/database";
import type { ops } from "../../manifest";
import { conflict, forbidden, notFound } from "../../manifest/errors";
import { newId } from "../../security/ids";
import { canAdminister, type Role } from "../context";
import type { Handler } from "../handler";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";

type O = typeof ops;

/** Records an invitation inside the caller's transaction; a second one to the same workspace is a conflict. */
export async function inviteUser(
  trx: Db,
  input: { workspaceId: string; userId: string; role: Role; name: string; invitedBy: string; email: string },
): Promise<{ id: string; created_at: string }> {
  const pending = await trx
    .selectFrom("invitations")
    .select("id")
    .where("workspace_id", "=", input.workspaceId)
    .where("user_id", "=", input.userId)
    .executeTakeFirst();
  if (pending) throw conflict(`${input.email} is already invited to this workspace`);
  const t = nowIso();
  const id = newId("inv");
  await trx
    .insertInto("invitations")
    .values({
      id,
      workspace_id: input.workspaceId,
      user_id: input.userId,
      role: input.role,
      name: input.name,
      invited_by: input.invitedBy,
      created_at: t,
      updated_at: t,
    })
    .execute();
  return { id, created_at: t };
}

/** Who sent an invitation, as both lists show it (null once that account is gone). */
function inviter(r: { inviter_name: string | null; inviter_email: string | null }): { name: string; email: string } | null {
  return r.inviter_name !== null && r.inviter_email !== null ? { name: r.inviter_name, email: r.inviter_email } : null;
}

export const listInvitations: Handler<O["listInvitations"]> = async ({ core, principal }, { query }) => {
  const listed = core.db
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
    .where("i.user_id", "=", principal.userId);
  return fetchPage(listed, "i", query, (r) => ({
    id: r.id,
    workspace: { id: r.workspace_id, name: r.workspace_name, slug: r.workspace_slug },
    role: r.role,
    invited_by: inviter(r),
    created_at: r.created_at,
  }));
};

export const acceptInvitation: Handler<O["acceptInvitation"]> = async ({ core, principal }, { params }) => {
  const joined = await core.db.transaction().execute(async (trx) => {
    const inv = await trx
      .selectFrom("invitations as i")
      .innerJoin("workspaces as w", "w.id", "i.workspace_id")
      .select(["i.id", "i.role", "w.id as workspace_id", "w.name", "w.slug"])
      .where("i.id", "=", params.invitationId)
      .where("i.user_id", "=", principal.userId)
      .executeTakeFirst();
    if (!inv) throw notFound("invitation");
    const t = nowIso();
    await trx
      .insertInto("memberships")
      .values({ workspace_id: inv.workspace_id, user_id: principal.userId, role: inv.role, created_at: t, updated_at: t })
      .onConflict((oc) => oc.columns(["workspace_id", "user_id"]).doNothing())
      .execute();
    await trx.deleteFrom("invitations").where("id", "=", inv.id).execute();
    const m = await trx
      .selectFrom("memberships")
      .select("role")
      .where("workspace_id", "=", inv.workspace_id)
      .where("user_id", "=", principal.userId)
      .executeTakeFirstOrThrow();
    return { workspace: { id: inv.workspace_id, name: inv.name, slug: inv.slug }, role: m.role };
  });
  core.keys.invalidate();
  return joined;
};

export const declineInvitation: Handler<O["declineInvitation"]> = async ({ core, principal }, { params }) => {
  const res = await core.db.deleteFrom("invitations").where("id", "=", params.invitationId).where("user_id", "=", principal.userId).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound("invitation");
};

// The workspace's side: owners and admins see the invitations it has sent and cancel a mistaken one. The list shows
// what the inviter gave (the address and the name), never anything of the invited account.
export const listWorkspaceInvitations: Handler<O["listWorkspaceInvitations"]> = async ({ core, principal }, { query }) => {
  if (!canAdminister(principal)) throw forbidden("only owners and admins can see the workspace's invitations");
  const listed = core.db
    .selectFrom("invitations as i")
    .innerJoin("users as invitee", "invitee.id", "i.user_id")
    .leftJoin("users as u", "u.id", "i.invited_by")
    .select(["i.id", "invitee.email", "i.name", "i.role", "i.created_at", "u.name as inviter_name", "u.email as inviter_email"])
    .where("i.workspace_id", "=", principal.workspaceId);
  return fetchPage(listed, "i", query, (r) => ({
    id: r.id,
    email: r.email,
    name: r.name,
    role: r.role,
    invited_by: inviter(r),
    created_at: r.created_at,
  }));
};

export const cancelInvitation: Handler<O["cancelInvitation"]> = async ({ core, principal }, { params }) => {
  if (!canAdminister(principal)) throw forbidden("only owners and admins can cancel invitations");
  await core.db.transaction().execute(async (trx) => {
    const inv = await trx
      .selectFrom("invitations")
      .select("role")
      .where("id", "=", params.invitationId)
      .where("workspace_id", "=", principal.workspaceId)
      .executeTakeFirst();
    // Accepted and declined invitations are deleted, so they are not found here either.
    if (!inv) throw notFound("invitation");
    // As with adding and removing owners: only an owner undoes an owner's decision about who becomes one.
    if (inv.role === "owner" && principal.role !== "owner") throw forbidden("only owners can cancel an invitation to the owner role");
    await trx.deleteFrom("invitations").where("id", "=", params.invitationId).execute();
  });
};
