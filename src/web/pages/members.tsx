// Members (owners and admins): add by email (a new person gets a password-setup link, someone with an account an
// invitation), change role, remove; the invitations still pending, with Cancel.
import { useState } from "preact/hooks";
import { Role as Roles } from "../../manifest/records";
import { call } from "../api";
import { useAction, useLoad } from "../hooks";
import { canAdminister, useSession } from "../session";
import type { Role } from "../types";
import { Card, ConfirmButton, CopyBlock, ErrorNote, Field, inputValue, Loading, PageTitle, when } from "../ui";

/** Least privileged first (the manifest lists them from the owner down). */
const ROLES: Role[] = [...Roles.options].reverse();

export function MembersPage() {
  const { session } = useSession();
  const members = useLoad(() => call("listMembers", { limit: 200 }), "members");
  const admin = canAdminister(session);
  const invitations = useLoad(
    () => (admin ? call("listWorkspaceInvitations", { limit: 200 }) : Promise.resolve({ data: [], next_cursor: null })),
    `invitations-${admin}`,
  );
  const [email, setEmail] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [setupUrl, setSetupUrl] = useState<string | null>(null);
  const [invited, setInvited] = useState<string | null>(null);
  const a = useAction();
  const add = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const m = await call("addMember", { email, role, name: name || undefined });
      setSetupUrl(m.setup_url);
      setInvited(m.status === "invited" ? m.email : null);
      setEmail("");
      setName("");
      await Promise.all([members.reload(), invitations.reload()]);
    });
  };
  const change = (userId: string, r: Role) =>
    a.run(async () => {
      await call("updateMember", { userId, role: r });
      await members.reload();
    });
  const remove = (userId: string) =>
    a.run(async () => {
      await call("removeMember", { userId });
      await members.reload();
    });
  const cancelling = useAction();
  const cancel = (invitationId: string) =>
    cancelling.run(async () => {
      await call("cancelInvitation", { invitationId });
      await invitations.reload();
    });
  const pending = invitations.data?.data ?? [];
  return (
    <div class="stack-lg">
      <PageTitle title={`Members of ${session.workspace?.name ?? "the workspace"}`} />
      {admin && (
        <Card title="Add a member">
          <form class="form-row" onSubmit={add}>
            <Field label="Email">
              <input required type="email" value={email} onInput={(e) => setEmail(inputValue(e))} />
            </Field>
            <Field label="Name (optional)">
              <input value={name} onInput={(e) => setName(inputValue(e))} />
            </Field>
            <Field label="Role">
              <select value={role} onChange={(e) => setRole(inputValue(e) as Role)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </Field>
            <button class="btn btn-primary" disabled={a.busy}>
              Add member
            </button>
          </form>
          {setupUrl && (
            <div class="note note-warn" data-testid="setup-url">
              Send this one-time link to the new member so they can set a password (valid for 7 days):
              <CopyBlock text={setupUrl} label="Copy setup link" />
            </div>
          )}
          {invited && (
            <div class="note" data-testid="invited">
              {invited} already has an account: they are invited, and join once they accept after signing in.
            </div>
          )}
          <ErrorNote message={a.error} details={a.details} />
        </Card>
      )}
      <Card title="Members">
        {members.loading && <Loading />}
        <ErrorNote message={members.error} />
        {members.data && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Email</th>
                  <th>Role</th>
                  <th>Since</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {members.data.data.map((m) => (
                  <tr key={m.user_id} data-member={m.email}>
                    <td data-label="Name">{m.name}</td>
                    <td data-label="Email">{m.email}</td>
                    <td data-label="Role">
                      {!admin ? (
                        m.role
                      ) : (
                        <select
                          aria-label={`Role of ${m.email}`}
                          value={m.role}
                          disabled={m.user_id === session.user?.id}
                          onChange={(e) => void change(m.user_id, inputValue(e) as Role)}
                        >
                          {ROLES.map((r) => (
                            <option key={r} value={r}>
                              {r}
                            </option>
                          ))}
                        </select>
                      )}
                    </td>
                    <td data-label="Since">{when(m.created_at)}</td>
                    <td class="actions">
                      {admin && m.user_id !== session.user?.id && (
                        <ConfirmButton
                          label="Remove"
                          question={`Remove ${m.email}? Their keys stop working at once.`}
                          onConfirm={() => void remove(m.user_id)}
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      {(pending.length > 0 || invitations.error || cancelling.error) && (
        <Card title="Pending invitations">
          <ErrorNote message={invitations.error ?? cancelling.error} />
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Email</th>
                  <th>Role</th>
                  <th>Invited by</th>
                  <th>Sent</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {pending.map((inv) => (
                  <tr key={inv.id} data-pending-invitation={inv.email}>
                    <td data-label="Name">{inv.name}</td>
                    <td data-label="Email">{inv.email}</td>
                    <td data-label="Role">{inv.role}</td>
                    <td data-label="Invited by">{inv.invited_by?.name ?? "—"}</td>
                    <td data-label="Sent">{when(inv.created_at)}</td>
                    <td class="actions">
                      {(inv.role !== "owner" || session.role === "owner") && (
                        <button
                          type="button"
                          class="btn btn-danger-quiet"
                          disabled={cancelling.busy}
                          aria-label={`Cancel the invitation of ${inv.email}`}
                          onClick={() => void cancel(inv.id)}
                        >
                          Cancel
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </div>
  );
}
