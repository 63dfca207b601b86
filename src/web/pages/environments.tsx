// A project's environments: variables shown and edited as text, secrets write-only (only names come back), and
// protection (owners and admins only): who may change an environment or run in it, and where its secrets may go;
// secrets removed one by one, and the runner labels its runs need.
import { useState } from "preact/hooks";
import { StaleEdit, useStaleGuard } from "../stale-edit";
import { savingEdits, useUnsavedEdits } from "../unsaved";
import { allPages, call } from "../api";
import { useAction, useLoad } from "../hooks";
import { canAdminister, useSession } from "../session";
import type { Environment } from "../types";
import { Badge, Card, ConfirmButton, Empty, ErrorNote, Field, inputValue, Loading } from "../ui";
import { ProjectFrame } from "./project-frame";

type Details = { path: string; message: string }[];

/** "NAME=value" lines to a map; blank lines and # comments are ignored. */
function parseLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t || t.startsWith("#")) continue;
    const eq = t.indexOf("=");
    if (eq < 0) out[t] = "";
    else out[t.slice(0, eq).trim()] = t.slice(eq + 1);
  }
  return out;
}

const toLines = (m: Record<string, string>) =>
  Object.entries(m)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");

/** Hosts one per line or comma-separated; none at all is the API's null (the host of BASE_URL). */
function parseHosts(text: string): string[] | null {
  const hosts = text
    .split(/[\n,]/)
    .map((h) => h.trim())
    .filter(Boolean);
  return hosts.length > 0 ? hosts : null;
}

/** Runner labels separated by spaces, commas or lines; none at all is [] (any runner). */
function parseLabels(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The runner labels its runs need, or that any runner (or the server itself) may take them. */
function RunnerLabels({ env }: { env: Environment }) {
  return (
    <p class="muted" data-testid="runner-labels">
      Runs here:{" "}
      {env.runner_labels.length === 0 ? (
        "any runner, or the server itself"
      ) : (
        <>
          only runners labelled{" "}
          {env.runner_labels.map((l) => (
            <code key={l} class="chip">
              {l}
            </code>
          ))}{" "}
          (they wait queued until one connects)
        </>
      )}
    </p>
  );
}

const HOSTS_PATH = "body.allowed_hosts";

/** The API's complaints about allowed_hosts, each naming the host as typed (details say only its index). */
function hostProblems(details: Details, typed: string): string[] {
  const hosts = parseHosts(typed) ?? [];
  return details
    .filter((d) => d.path === HOSTS_PATH || d.path.startsWith(`${HOSTS_PATH}.`))
    .map((d) => {
      const host = hosts[Number(d.path.slice(HOSTS_PATH.length + 1))];
      return d.path !== HOSTS_PATH && host !== undefined ? `${host}: ${d.message}` : d.message;
    });
}

const otherDetails = (details: Details) => details.filter((d) => d.path !== HOSTS_PATH && !d.path.startsWith(`${HOSTS_PATH}.`));

/** Where a protected environment's secrets may go, as the run engine decides it. */
function AllowedHosts({ env }: { env: Environment }) {
  let baseHost = "";
  try {
    baseHost = env.variables.BASE_URL ? new URL(env.variables.BASE_URL).hostname : "";
  } catch {
    baseHost = "";
  }
  return (
    <p class="muted" data-testid="allowed-hosts">
      Secrets go only to:{" "}
      {env.allowed_hosts === null ? (
        <span>the host of BASE_URL{baseHost ? ` (${baseHost})` : ""}</span>
      ) : (
        <span class="mono">{env.allowed_hosts.join(", ")}</span>
      )}
    </p>
  );
}

/** The "Protected" tick and the allowed hosts, with the API's complaints about them next to the field. */
function ProtectionFields({
  id,
  protect,
  hosts,
  problems,
  onProtect,
  onHosts,
}: {
  id: string;
  protect: boolean;
  hosts: string;
  problems: string[];
  onProtect: (v: boolean) => void;
  onHosts: (v: string) => void;
}) {
  return (
    <div class="stack">
      <div class="field">
        <label class="check">
          <input type="checkbox" checked={protect} onChange={(e) => onProtect(e.currentTarget.checked)} />
          Protected
        </label>
        <span class="field-hint">Only owners and admins can change it or start runs in it, and its secrets go only to its allowed hosts.</span>
      </div>
      <Field
        label="Allowed hosts"
        hint="Where its secrets may be sent: host names or IP addresses, one per line or comma-separated, no scheme, port or path. Empty: the host of BASE_URL."
      >
        <textarea
          class="mono"
          rows={2}
          value={hosts}
          onInput={(e) => onHosts(inputValue(e))}
          aria-invalid={problems.length > 0 ? "true" : undefined}
          aria-describedby={problems.length > 0 ? `${id}-problems` : undefined}
        />
        {problems.length > 0 && (
          <ul class="problems" id={`${id}-problems`} data-testid="allowed-hosts-problems">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        )}
      </Field>
    </div>
  );
}

const PROTECTED_REASON = "protected: only owners and admins can change it";

/** A protected environment as a member sees it: everything shown, nothing to change. */
function ProtectedEnvironment({ env }: { env: Environment }) {
  return (
    <Card
      title={
        <>
          {env.name} <Badge status="protected" />
        </>
      }
    >
      <p class="note note-warn">{PROTECTED_REASON}</p>
      <Field label="Variables">
        <textarea class="mono" rows={4} readOnly value={toLines(env.variables)} />
      </Field>
      <p class="muted">
        Secrets:{" "}
        {env.secret_names.length
          ? env.secret_names.map((n) => (
              <code key={n} class="chip">
                {n}
              </code>
            ))
          : "none"}
      </p>
      <AllowedHosts env={env} />
      <RunnerLabels env={env} />
    </Card>
  );
}

/** The names of an environment's secrets, each with a Remove button that asks first (values are never shown). */
function SecretNames({ env, onRemove }: { env: Environment; onRemove: (name: string) => Promise<void> }) {
  if (env.secret_names.length === 0) return <p class="muted">Secrets: none</p>;
  return (
    <div class="stack" data-testid="secret-names">
      <span class="muted">Secrets:</span>
      <ul class="secret-list">
        {env.secret_names.map((n) => (
          <li key={n} class="row" data-secret={n}>
            <code class="chip">{n}</code>
            <ConfirmButton label="Remove" name={`Remove secret ${n}`} question={`Remove secret ${n} from ${env.name}?`} onConfirm={() => onRemove(n)} />
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * One environment's form. `onSaved` reloads the list and shows the stored version afresh (after a save, or "Reload");
 * `onChanged` only reloads it (a secret removed), keeping the edits on screen.
 */
function EnvironmentEditor({
  project,
  env,
  mayProtect,
  onSaved,
  onChanged,
}: {
  project: string;
  env: Environment;
  mayProtect: boolean;
  onSaved: () => Promise<void>;
  onChanged: () => Promise<void>;
}) {
  const [vars, setVars] = useState(toLines(env.variables));
  const [secrets, setSecrets] = useState("");
  const [protect, setProtect] = useState(env.protected);
  const [hosts, setHosts] = useState((env.allowed_hosts ?? []).join("\n"));
  const [labels, setLabels] = useState(env.runner_labels.join(" "));
  const unsaved = useUnsavedEdits(
    { vars, secrets, protect, hosts, labels },
    { vars: toLines(env.variables), secrets: "", protect: env.protected, hosts: (env.allowed_hosts ?? []).join("\n"), labels: env.runner_labels.join(" ") },
  );
  const a = useAction();
  const guard = useStaleGuard(env, () => call("getEnvironment", { project, environmentId: env.id }));
  const put = (ifMatch: string) => {
    const newSecrets = parseLines(secrets);
    return call("updateEnvironment", {
      project,
      environmentId: env.id,
      if_match: ifMatch,
      variables: parseLines(vars),
      ...(Object.keys(newSecrets).length > 0 ? { secrets: newSecrets } : {}),
      runner_labels: parseLabels(labels),
      // Only owners and admins may send these at all: a member's save leaves protection as it is.
      ...(mayProtect ? { protected: protect, allowed_hosts: parseHosts(hosts) } : {}),
    });
  };
  const saved = async (answer: unknown) => {
    if (answer === null) return;
    setSecrets("");
    await onSaved();
  };
  const save = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => saved(await savingEdits(unsaved, () => guard.save(put))));
  };
  // The API removes a secret given null for it; its other secrets and fields are kept.
  const removeSecret = async (name: string) => {
    await a.run(async () => {
      await call("updateEnvironment", { project, environmentId: env.id, secrets: { [name]: null } });
      await onChanged();
    });
  };
  return (
    <Card
      title={
        <>
          {env.name}
          {env.protected && (
            <>
              {" "}
              <Badge status="protected" />
            </>
          )}
        </>
      }
      actions={
        <ConfirmButton
          label="Delete"
          question={`Delete environment ${env.name}?`}
          onConfirm={() =>
            void a.run(async () => {
              await call("deleteEnvironment", { project, environmentId: env.id });
              await onChanged();
            })
          }
        />
      }
    >
      <form class="stack" onSubmit={save}>
        <Field label="Variables" hint="One NAME=value per line, e.g. BASE_URL=https://staging.example.com">
          <textarea class="mono" rows={4} value={vars} onInput={(e) => setVars(inputValue(e))} />
        </Field>
        <SecretNames env={env} onRemove={removeSecret} />
        <Field label="Set secrets" hint="Write-only: NAME=value lines; they are never shown again and are masked as *** in results.">
          <textarea class="mono" rows={2} value={secrets} onInput={(e) => setSecrets(inputValue(e))} />
        </Field>
        <Field
          label="Runner labels"
          hint="Only runners (svc runner) having all these labels run this environment's runs, separated by spaces or commas; empty: any runner, or the server itself."
        >
          <input class="mono" value={labels} onInput={(e) => setLabels(inputValue(e))} placeholder="none" />
        </Field>
        {env.protected && <AllowedHosts env={env} />}
        {mayProtect && (
          <ProtectionFields
            id={`env-${env.id}`}
            protect={protect}
            hosts={hosts}
            problems={hostProblems(a.details, hosts)}
            onProtect={setProtect}
            onHosts={setHosts}
          />
        )}
        <ErrorNote message={a.error} details={otherDetails(a.details)} />
        {guard.stale && (
          <StaleEdit
            noun="environment"
            before={env}
            now={guard.stale}
            onReload={() => void onSaved()}
            onOverwrite={() => void a.run(async () => saved(await savingEdits(unsaved, () => guard.overwrite(put))))}
          />
        )}
        <div class="row">
          <button class="btn btn-primary" disabled={a.busy}>
            Save environment
          </button>
        </div>
      </form>
    </Card>
  );
}

/** The fields an environment's form holds: a version that changes any of them is shown afresh, one that does not keeps the edits. */
const editedFields = (env: Environment) => JSON.stringify([env.variables, env.protected, env.allowed_hosts, env.runner_labels]);

export function EnvironmentsPage({ project }: { project: string }) {
  const { session } = useSession();
  const mayProtect = canAdminister(session);
  const list = useLoad(() => allPages((cursor) => call("listEnvironments", { project, limit: 200, cursor })), `envs:${project}`);
  // Counts the forms' saves: each shows the stored versions afresh, even one stored unchanged or tidied.
  const [saves, setSaves] = useState(0);
  const [name, setName] = useState("");
  const [protect, setProtect] = useState(false);
  const [hosts, setHosts] = useState("");
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const allowed = parseHosts(hosts);
      await call("createEnvironment", {
        project,
        name,
        ...(mayProtect && protect ? { protected: true } : {}),
        ...(mayProtect && allowed ? { allowed_hosts: allowed } : {}),
      });
      setName("");
      setProtect(false);
      setHosts("");
      await list.reload();
    });
  };
  return (
    <ProjectFrame project={project} section="environments">
      <Card title="New environment">
        <form class="stack" onSubmit={create}>
          <div class="form-row">
            <Field label="Environment name">
              <input required value={name} onInput={(e) => setName(inputValue(e))} placeholder="staging" />
            </Field>
            <button class="btn btn-primary" disabled={a.busy}>
              Create environment
            </button>
          </div>
          {mayProtect && (
            <ProtectionFields
              id="env-new"
              protect={protect}
              hosts={hosts}
              problems={hostProblems(a.details, hosts)}
              onProtect={setProtect}
              onHosts={setHosts}
            />
          )}
        </form>
        <ErrorNote message={a.error} details={otherDetails(a.details)} />
      </Card>
      {list.loading && <Loading />}
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Empty>No environments yet.</Empty>}
      {list.data?.data.map((env) =>
        env.protected && !mayProtect ? (
          <ProtectedEnvironment key={`${env.id}:${env.updated_at}`} env={env} />
        ) : (
          <EnvironmentEditor
            key={`${env.id}:${saves}:${editedFields(env)}`}
            project={project}
            env={env}
            mayProtect={mayProtect}
            onSaved={async () => {
              await list.reload();
              setSaves((n) => n + 1);
            }}
            onChanged={list.reload}
          />
        ),
      )}
    </ProjectFrame>
  );
}
