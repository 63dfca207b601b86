// Settings → Runners (owners and admins): the runners that may run this workspace's runs, a token for a new one
// (shown once), and revoking the workspace's own.
import { useState } from "preact/hooks";
import { allPages, call } from "../api";
import { useAction, useLoad } from "../hooks";
import { canAdminister, useSession } from "../session";
import type { Runner } from "../types";
import { ago, Badge, Card, ConfirmButton, CopyBlock, Empty, ErrorNote, Field, inputValue, Loading, PageTitle, when } from "../ui";

export function RunnersPage() {
  const { session } = useSession();
  const admin = canAdminister(session);
  const runners = useLoad(
    () => (admin ? allPages((cursor) => call("listRunners", { limit: 200, cursor })) : Promise.resolve({ data: [], next_cursor: null })),
    `runners-${admin}`,
  );
  const [name, setName] = useState("");
  const [labels, setLabels] = useState("");
  const [token, setToken] = useState<string | null>(null);
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    const list = labels
      .split(",")
      .map((l) => l.trim())
      .filter((l) => l !== "");
    await a.run(async () => {
      setToken((await call("createRunner", { name, labels: list })).token);
      setName("");
      setLabels("");
      await runners.reload();
    });
  };
  const revoke = async (id: string) => {
    await a.run(async () => {
      await call("revokeRunner", { runnerId: id });
      await runners.reload();
    });
  };
  const rows: Runner[] = runners.data?.data ?? [];
  if (!admin)
    return (
      <div class="stack-lg">
        <PageTitle title="Runners" />
        <p class="note">Only owners and admins of {session.workspace?.name} can see and manage its runners.</p>
      </div>
    );
  return (
    <div class="stack-lg">
      <PageTitle title="Runners" />
      <Card title="Add a runner">
        <p class="muted">
          A runner executes this workspace's runs on another machine — one in another network, or more capacity. It only ever takes runs of workspace{" "}
          <strong>{session.workspace?.name}</strong>. Environments that require runner labels run only on runners having them all.
        </p>
        <form class="form-row" onSubmit={create}>
          <Field label="Runner name">
            <input required maxLength={200} value={name} onInput={(e) => setName(inputValue(e))} placeholder="office-box, eu-1…" />
          </Field>
          <Field label="Labels (optional)" hint="comma-separated, e.g. eu,office-net">
            <input value={labels} onInput={(e) => setLabels(inputValue(e))} />
          </Field>
          <button class="btn btn-primary" disabled={a.busy}>
            Create runner token
          </button>
        </form>
        <ErrorNote message={a.error} details={a.details} />
        {token && (
          <div class="note note-warn" data-testid="new-runner-token">
            <strong>Copy the runner token now: it cannot be shown again.</strong> Start the runner with it:
            <CopyBlock text={`SVC_RUNNER_TOKEN=${token} svc runner --server ${session.base_url}`} label="Copy runner command" />
            <button type="button" class="btn btn-quiet" onClick={() => setToken(null)}>
              I have stored it
            </button>
          </div>
        )}
      </Card>
      <Card title="Runners">
        {runners.loading && <Loading what="runners" />}
        <ErrorNote message={runners.error} />
        {runners.data && rows.length === 0 && <Empty>No runners yet: runs execute on this server.</Empty>}
        {rows.length > 0 && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Labels</th>
                  <th>Scope</th>
                  <th>Last seen</th>
                  <th>Running</th>
                  <th>Version</th>
                  <th>State</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.id} data-runner-id={r.id}>
                    <td data-label="Name">{r.name}</td>
                    <td data-label="Labels">{r.labels.length > 0 ? r.labels.join(", ") : "none"}</td>
                    <td data-label="Scope" class="whole-words">
                      {r.scope === "server" ? "whole server" : "this workspace"}
                    </td>
                    <td data-label="Last seen" class="whole-words" title={when(r.last_seen_at)}>
                      {r.last_seen_at ? ago(r.last_seen_at) : "never"}
                    </td>
                    <td data-label="Running" class="whole-words">
                      {r.running}
                    </td>
                    <td data-label="Version">{r.version ?? "—"}</td>
                    <td data-label="State">
                      <Badge status={r.revoked_at ? "revoked" : r.connected ? "connected" : "not_connected"} />
                    </td>
                    <td class="actions">
                      {!r.revoked_at && r.scope === "workspace" && (
                        <ConfirmButton label="Revoke" question={`Revoke ${r.name}?`} onConfirm={() => revoke(r.id)} />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
    </div>
  );
}
