// Settings → CLI & API keys: create (shown once), list, revoke; install commands and an MCP configuration. A revoke
// is made from the version shown (If-Match): a key changed elsewhere meanwhile asks for a reload first.
import { useState } from "preact/hooks";
import { allPages, call } from "../api";
import { useAction, useLoad } from "../hooks";
import { useSession } from "../session";
import { StaleNotice, useStaleGuard } from "../stale-edit";
import type { ApiKey, CreatedKey } from "../types";
import { Badge, Card, ConfirmButton, CopyBlock, Empty, ErrorNote, Field, inputValue, Loading, PageTitle, when } from "../ui";

function keyState(k: ApiKey): string {
  if (k.revoked_at) return "revoked";
  if (k.expires_at && k.expires_at <= new Date().toISOString()) return "expired";
  return "active";
}

export function KeysPage() {
  const { session } = useSession();
  const keys = useLoad(() => allPages((cursor) => call("listKeys", { limit: 200, cursor })), "keys");
  const [name, setName] = useState("");
  const [expiry, setExpiry] = useState("");
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    const expires_at = expiry ? new Date(`${expiry}T23:59:59`).toISOString() : null;
    await a.run(async () => {
      setCreated(await call("createKey", { name, expires_at }));
      setName("");
      setExpiry("");
      await keys.reload();
    });
  };
  const base = session.base_url;
  const mcp = JSON.stringify({ mcpServers: { svc: { command: "svc", args: ["mcp"], env: { SVC_SERVER: base, SVC_API_KEY: "<your key>" } } } }, null, 2);
  return (
    <div class="stack-lg">
      <PageTitle title="CLI & API keys" />
      <Card title="Create a key">
        <p class="muted">
          A key acts as you in workspace <strong>{session.workspace?.name}</strong>. Use one key per machine or integration, so each can be revoked on its own.
        </p>
        <form class="form-row" onSubmit={create}>
          <Field label="Key name">
            <input required maxLength={200} value={name} onInput={(e) => setName(inputValue(e))} placeholder="laptop, CI pipeline…" />
          </Field>
          <Field label="Expires (optional)">
            <input type="date" value={expiry} onInput={(e) => setExpiry(inputValue(e))} />
          </Field>
          <button class="btn btn-primary" disabled={a.busy}>
            Create key
          </button>
        </form>
        <ErrorNote message={a.error} details={a.details} />
        {created && (
          <div class="note note-warn" data-testid="new-key">
            <strong>Copy your new key now: it cannot be shown again.</strong> Only a hash of it is stored; a lost key must be revoked and replaced.
            <CopyBlock text={created.key} label="Copy key" />
            <button type="button" class="btn btn-quiet" onClick={() => setCreated(null)}>
              I have stored it
            </button>
          </div>
        )}
      </Card>
      <Card title="Your keys">
        {keys.loading && <Loading what="keys" />}
        <ErrorNote message={keys.error} />
        {keys.data && keys.data.data.length === 0 && <Empty>No keys yet.</Empty>}
        {keys.data && keys.data.data.length > 0 && (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Key</th>
                  <th>Created</th>
                  <th>Last used</th>
                  <th>Expires</th>
                  <th>State</th>
                  <th>
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.data.map((k) => (
                  <KeyRow key={k.id} k={k} run={a.run} onChanged={keys.reload} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <Card title="Install the CLI">
        <p class="muted">From this server, without any package registry:</p>
        <CopyBlock text={`curl -fsSL ${base}/install.sh | sh`} label="Copy install command" />
        <p class="muted">Or from npm:</p>
        <CopyBlock text="npm install -g bun svc-cli" label="Copy npm command" />
        <p class="muted">Then sign the CLI in with a key:</p>
        <CopyBlock text={`svc login --server ${base}`} label="Copy login command" />
      </Card>
      <Card title="MCP client configuration">
        <p class="muted">
          For AI assistants that speak MCP (put a key in place of <code>&lt;your key&gt;</code>):
        </p>
        <CopyBlock text={mcp} label="Copy MCP configuration" />
      </Card>
    </div>
  );
}

function KeyRow({ k, run, onChanged }: { k: ApiKey; run: ReturnType<typeof useAction>["run"]; onChanged: () => Promise<void> }) {
  const guard = useStaleGuard(k, () => call("getKey", { keyId: k.id }));
  const revoke = async (ifMatch: string) => {
    await call("revokeKey", { keyId: k.id, if_match: ifMatch });
    return true;
  };
  const reload = async () => {
    guard.dismiss();
    await onChanged();
  };
  return (
    <>
      <tr data-key-id={k.id}>
        <td data-label="Name">{k.name}</td>
        <td data-label="Key">
          <code>{k.prefix}…</code>
        </td>
        <td data-label="Created" class="whole-words">
          {when(k.created_at)}
        </td>
        <td data-label="Last used" class="whole-words">
          {k.last_used_at ? when(k.last_used_at) : "never"}
        </td>
        <td data-label="Expires" class="whole-words">
          {k.expires_at ? when(k.expires_at) : "never"}
        </td>
        <td data-label="State">
          <Badge status={keyState(k)} />
        </td>
        <td class="actions">
          {!k.revoked_at && (
            <ConfirmButton
              label="Revoke"
              question={`Revoke ${k.name}?`}
              onConfirm={() =>
                run(async () => {
                  if ((await guard.save(revoke)) !== null) await onChanged();
                }).then(() => undefined)
              }
            />
          )}
        </td>
      </tr>
      {guard.stale && (
        <tr>
          <td colSpan={7}>
            <StaleNotice noun={`key ${k.name}`} verb="revoke" before={k} now={guard.stale} onReload={() => void reload()} />
          </td>
        </tr>
      )}
    </>
  );
}
