// Pending invitations of the signed-in person to other workspaces, with Accept and Decline, above every page.
import { allPages, call } from "../api";
import { useAction, useLoad } from "../hooks";
import { useSession } from "../session";
import type { Invitation } from "../types";
import { Card, ErrorNote } from "../ui";

export function PendingInvitations() {
  const { refresh } = useSession();
  const list = useLoad(() => allPages((cursor) => call("listInvitations", { limit: 200, cursor })), "invitations");
  const a = useAction();
  const pending = list.data?.data ?? [];
  if (pending.length === 0 && !a.error) return null;
  const answer = (inv: Invitation, accept: boolean) =>
    a.run(async () => {
      if (accept) await call("acceptInvitation", { invitationId: inv.id });
      else await call("declineInvitation", { invitationId: inv.id });
      await list.reload();
      await refresh();
    });
  return (
    <Card title="Invitations">
      <ul class="stack" data-testid="invitations">
        {pending.map((inv) => (
          <li key={inv.id} class="form-row" data-invitation={inv.workspace.slug}>
            <span>
              {inv.invited_by ? `${inv.invited_by.name} (${inv.invited_by.email})` : "Someone"} invited you to <strong>{inv.workspace.name}</strong> as{" "}
              {inv.role}.
            </span>
            <button type="button" class="btn btn-primary" disabled={a.busy} onClick={() => void answer(inv, true)}>
              Accept
            </button>
            <button type="button" class="btn" disabled={a.busy} onClick={() => void answer(inv, false)}>
              Decline
            </button>
          </li>
        ))}
      </ul>
      <ErrorNote message={a.error} />
    </Card>
  );
}
