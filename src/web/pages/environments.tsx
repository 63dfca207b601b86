// A project's environments: variables shown and edited as text, secrets write-only (only names come back).
import { useState } from "preact/hooks";
import { enc, op } from "../api";
import { useAction, useLoad } from "../hooks";
import type { Environment, Page } from "../types";
import { Card, ConfirmButton, Empty, ErrorNote, Field, inputValue, Loading } from "../ui";
import { ProjectFrame } from "./project-frame";

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

const toLines = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k}=${v}`).join("\n");

function EnvironmentEditor({ project, env, onSaved }: { project: string; env: Environment; onSaved: () => Promise<void> }) {
  const [vars, setVars] = useState(toLines(env.variables));
  const [secrets, setSecrets] = useState("");
  const a = useAction();
  const save = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const newSecrets = parseLines(secrets);
      await op("PATCH", `/projects/${enc(project)}/environments/${env.id}`, {
        variables: parseLines(vars),
        ...(Object.keys(newSecrets).length > 0 ? { secrets: newSecrets } : {}),
      });
      setSecrets("");
      await onSaved();
    });
  };
  return (
    <Card
      title={env.name}
      actions={<ConfirmButton label="Delete" question={`Delete environment ${env.name}?`} onConfirm={() => void a.run(async () => { await op("DELETE", `/projects/${enc(project)}/environments/${env.id}`); await onSaved(); })} />}
    >
      <form class="stack" onSubmit={save}>
        <Field label="Variables" hint="One NAME=value per line, e.g. BASE_URL=https://staging.example.com">
          <textarea class="mono" rows={4} value={vars} onInput={(e) => setVars(inputValue(e))} />
        </Field>
        <p class="muted">Secrets: {env.secret_names.length ? env.secret_names.map((n) => <code key={n} class="chip">{n}</code>) : "none"}</p>
        <Field label="Set secrets" hint="Write-only: NAME=value lines; they are never shown again and are masked as *** in results.">
          <textarea class="mono" rows={2} value={secrets} onInput={(e) => setSecrets(inputValue(e))} />
        </Field>
        <ErrorNote message={a.error} details={a.details} />
        <div class="row"><button class="btn btn-primary" disabled={a.busy}>Save environment</button></div>
      </form>
    </Card>
  );
}

export function EnvironmentsPage({ project }: { project: string }) {
  const list = useLoad(() => op<Page<Environment>>("GET", `/projects/${enc(project)}/environments?limit=200`), `envs:${project}`);
  const [name, setName] = useState("");
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      await op("POST", `/projects/${enc(project)}/environments`, { name });
      setName("");
      await list.reload();
    });
  };
  return (
    <ProjectFrame project={project} section="environments">
      <Card title="New environment">
        <form class="form-row" onSubmit={create}>
          <Field label="Environment name"><input required value={name} onInput={(e) => setName(inputValue(e))} placeholder="staging" /></Field>
          <button class="btn btn-primary" disabled={a.busy}>Create environment</button>
        </form>
        <ErrorNote message={a.error} details={a.details} />
      </Card>
      {list.loading && <Loading />}
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Empty>No environments yet.</Empty>}
      {list.data?.data.map((env) => <EnvironmentEditor key={`${env.id}:${env.updated_at}`} project={project} env={env} onSaved={list.reload} />)}
    </ProjectFrame>
  );
}
