// Members (owners and admins): add by email (a new person gets a password-setup link, someone with an account an
// invitation), change role, remove; the invitations still pending, with Cancel. Each change is made from the version
// shown (If-Match): one made elsewhere meanwhile opens the reload/overwrite dialog (a role) or asks for a reload first.
import { useMemo, useState } from "preact/hooks";
import { Role as Roles } from "../../manifest/records";
import { allPages, call } from "../api";
import { useAction, useLoad } from "../hooks";
import { canAdminister, useSession } from "../session";
import { StaleEdit, StaleNotice, useStaleGuard } from "../stale-edit";
import type { Member, Role, WorkspaceInvitation } from "../types";
import { Card, ConfirmButton, CopyBlock, ErrorNote, Field, inputValue, Loading, PageTitle, when } from "../ui";

/** Least privileged first (the manifest lists them from the owner down). */
const ROLES: Role[] = [...Roles.options].reverse();

export function MembersPage() {
  const { session } = useSession();
  const members = useLoad(() => allPages((cursor) => call("listMembers", { limit: 200, cursor })), "members");
  const admin = canAdminister(session);
  const invitations = useLoad(
    () => (admin ? allPages((cursor) => call("listWorkspaceInvitations", { limit: 200, cursor })) : Promise.resolve({ data: [], next_cursor: null })),
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
  const cancelling = useAction();
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
                  <MemberRow key={m.user_id} m={m} admin={admin} self={m.user_id === session.user?.id} onChanged={members.reload} />
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
                  <InvitationRow
                    key={inv.id}
                    inv={inv}
                    mayCancel={inv.role !== "owner" || session.role === "owner"}
                    action={cancelling}
                    onChanged={invitations.reload}
                  />
                ))}
              </tbody>
            </table>
          </div>
        </Card>
      )}
    </div>
  );
}

type Action = ReturnType<typeof useAction>;

/** A member as the stale guard keys records (by id). */
type ShownMember = Member & { id: string };

/** A member's row; what a change of it comes to (a refusal's reason) is said under it, not elsewhere on the page. */
function MemberRow({ m, admin, self, onChanged }: { m: Member; admin: boolean; self: boolean; onChanged: () => Promise<void> }) {
  const { run, error, details } = useAction();
  const shown = useMemo<ShownMember>(() => ({ ...m, id: m.user_id }), [m]);
  const guard = useStaleGuard<ShownMember>(shown, async () => {
    const now = await call("getMember", { userId: m.user_id });
    return { ...now, id: now.user_id };
  });
  // The role picked here while its change is pending or refused as stale; the stored one otherwise.
  const [wanted, setWanted] = useState<Role | null>(null);
  const [refused, setRefused] = useState<"role" | "remove" | null>(null);
  const putRole = (role: Role) => (ifMatch: string) => call("updateMember", { userId: m.user_id, role, if_match: ifMatch });
  const remove = async (ifMatch: string) => {
    await call("removeMember", { userId: m.user_id, if_match: ifMatch });
    return true;
  };
  const done = async (answer: unknown, what: "role" | "remove") => {
    if (answer === null) {
      setRefused(what);
      return;
    }
    setRefused(null);
    setWanted(null);
    await onChanged();
  };
  const reload = async () => {
    guard.dismiss();
    setRefused(null);
    setWanted(null);
    await onChanged();
  };
  return (
    <>
      <tr data-member={m.email}>
        <td data-label="Name">{m.name}</td>
        <td data-label="Email">{m.email}</td>
        <td data-label="Role" class="whole-words">
          {!admin ? (
            m.role
          ) : (
            <select
              aria-label={`Role of ${m.email}`}
              value={wanted ?? m.role}
              disabled={self}
              onChange={(e) => {
                const role = inputValue(e) as Role;
                setWanted(role);
                // A change the server refuses (an admin may not take the owner role) shows the stored role again,
                // not the one picked: the list must not claim a role the member does not have.
                void run(async () => done(await guard.save(putRole(role)), "role")).then((ok) => {
                  if (!ok) setWanted(null);
                });
              }}
            >
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          )}
        </td>
        <td data-label="Since" class="whole-words">
          {when(m.created_at)}
        </td>
        <td class="actions">
          {admin && !self && (
            <ConfirmButton
              label="Remove"
              question={`Remove ${m.email}? Their keys stop working at once.`}
              onConfirm={() => void run(async () => done(await guard.save(remove), "remove"))}
            />
          )}
        </td>
      </tr>
      {error && !(guard.stale && refused) && (
        <tr>
          <td colSpan={5}>
            <ErrorNote message={error} details={details} />
          </td>
        </tr>
      )}
      {guard.stale && refused && (
        <tr>
          <td colSpan={5}>
            {refused === "role" && wanted ? (
              <StaleEdit
                noun={`member ${m.email}`}
                before={shown}
                now={guard.stale}
                onReload={() => void reload()}
                onOverwrite={() => void run(async () => done(await guard.overwrite(putRole(wanted)), "role"))}
              />
            ) : (
              <StaleNotice noun={`member ${m.email}`} verb="remove" before={shown} now={guard.stale} onReload={() => void reload()} />
            )}
          </td>
        </tr>
      )}
    </>
  );
}

function InvitationRow({
  inv,
  mayCancel,
  action,
  onChanged,
}: {
  inv: WorkspaceInvitation;
  mayCancel: boolean;
  action: Action;
  onChanged: () => Promise<void>;
}) {
  const guard = useStaleGuard(inv, () => call("getWorkspaceInvitation", { invitationId: inv.id }));
  const cancel = async (ifMatch: string) => {
    await call("cancelInvitation", { invitationId: inv.id, if_match: ifMatch });
    return true;
  };
  const reload = async () => {
    guard.dismiss();
    await onChanged();
  };
  return (
    <>
      <tr data-pending-invitation={inv.email}>
        <td data-label="Name">{inv.name}</td>
        <td data-label="Email">{inv.email}</td>
        <td data-label="Role" class="whole-words">
          {inv.role}
        </td>
        <td data-label="Invited by">{inv.invited_by?.name ?? "—"}</td>
        <td data-label="Sent" class="whole-words">
          {when(inv.created_at)}
        </td>
        <td class="actions">
          {mayCancel && (
            <button
              type="button"
              class="btn btn-danger-quiet"
              disabled={action.busy}
              aria-label={`Cancel the invitation of ${inv.email}`}
              onClick={() =>
                void action.run(async () => {
                  if ((await guard.save(cancel)) !== null) await onChanged();
                })
              }
            >
              Cancel
            </button>
          )}
        </td>
      </tr>
      {guard.stale && (
        <tr>
          <td colSpan={6}>
            <StaleNotice noun={`invitation of ${inv.email}`} verb="cancel" before={inv} now={guard.stale} onReload={() => void reload()} />
          </td>
        </tr>
      )}
    </>
  );
}
