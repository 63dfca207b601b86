// One automation: its settings and steps (validated editor), activate/disable, run (in an environment), delete,
// quarantine, its health and its timeline of runs, and its recent runs; followed while shown, as runs of it start
// and end elsewhere (CI, schedules, another tab).
import { useEffect, useRef, useState } from "preact/hooks";
import { allPages, call, enc, versionOf } from "../api";
import { LIST_POLL_MS, useAction, useLoad } from "../hooks";
import { navigate } from "../router";
import type { Automation, Environment, Feature, Run } from "../types";
import { Badge, Card, ConfirmButton, ErrorNote, Field, inputValue, Loading, when } from "../ui";
import { RunTimeline } from "../charts";
import { isStale, StaleEdit } from "../stale-edit";
import { savingEdits, useUnsavedEdits } from "../unsaved";
import { ProjectFrame } from "./project-frame";
import { environmentLabel, useRunEnvironment } from "./run-environment";
import { RecentRuns } from "./runs";
import { checkSteps, StepsEditor } from "./steps-editor";

function AutomationEditor({
  project,
  automation,
  environments,
  features,
  onSaved,
}: {
  project: string;
  automation: Automation;
  environments: Environment[];
  features: Feature[];
  onSaved: () => Promise<void>;
}) {
  const [initial] = useState(() => ({
    name: automation.name,
    description: automation.description,
    tags: automation.tags.join(", "),
    timeout_ms: String(automation.timeout_ms),
    retries: String(automation.retries),
    environment: automation.environment_id ?? "",
    feature: automation.feature_id ?? "",
    text: JSON.stringify(automation.steps, null, 2),
  }));
  const [f, setF] = useState(initial);
  const [text, setText] = useState(initial.text);
  const unsaved = useUnsavedEdits({ ...f, text }, initial);
  const a = useAction();
  const steps = checkSteps(text, automation.kind).steps;
  // The version these edits start from: a save made over someone else's newer one is refused, not lost.
  const [base, setBase] = useState(() => ({ record: automation, tag: versionOf(automation) }));
  const [stale, setStale] = useState<Automation | null>(null);
  // This page's own changes that leave the form's fields alone (quarantine, activate, disable) bring a newer version
  // without remounting the form: the edits on screen are kept, and saved from that version, not refused as stale.
  useEffect(() => {
    setBase((held) => (held.record.updated_at === automation.updated_at ? held : { record: automation, tag: versionOf(automation) }));
  }, [automation.updated_at]);
  const submit = async (ifMatch: string | undefined) => {
    if (!steps) return;
    try {
      const saved = await savingEdits(unsaved, () => put(ifMatch));
      // Later saves start from this one.
      if (saved) setBase({ record: saved, tag: versionOf(saved) });
    } catch (err) {
      if (!isStale(err)) throw err;
      setStale(await call("getAutomation", { project, automationId: automation.id }));
      return;
    }
    setStale(null);
    await onSaved();
  };
  const save = async (e: Event) => {
    e.preventDefault();
    await a.run(() => submit(base.tag));
  };
  const overwrite = () => {
    if (!stale) return;
    const fresh = { record: stale, tag: versionOf(stale) };
    setBase(fresh);
    void a.run(() => submit(fresh.tag));
  };
  const put = async (ifMatch: string | undefined) => {
    if (!steps) return null;
    return call("updateAutomation", {
      project,
      automationId: automation.id,
      if_match: ifMatch,
      name: f.name,
      description: f.description,
      steps,
      tags: f.tags
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean),
      timeout_ms: Number(f.timeout_ms),
      retries: Number(f.retries),
      environment: f.environment || null,
      feature: f.feature || null,
    });
  };
  return (
    <form class="stack" onSubmit={save}>
      <Field label="Name">
        <input required value={f.name} onInput={(e) => setF({ ...f, name: inputValue(e) })} />
      </Field>
      <Field label="Description">
        <textarea rows={2} value={f.description} onInput={(e) => setF({ ...f, description: inputValue(e) })} />
      </Field>
      <div class="form-row">
        <Field label="Tags" hint="Comma-separated.">
          <input value={f.tags} onInput={(e) => setF({ ...f, tags: inputValue(e) })} />
        </Field>
        <Field label="Timeout (ms)">
          <input type="number" min={1000} value={f.timeout_ms} onInput={(e) => setF({ ...f, timeout_ms: inputValue(e) })} />
        </Field>
        <Field label="Retries">
          <input type="number" min={0} max={10} value={f.retries} onInput={(e) => setF({ ...f, retries: inputValue(e) })} />
        </Field>
      </div>
      <div class="form-row">
        <Field label="Default environment">
          <select value={f.environment} onChange={(e) => setF({ ...f, environment: inputValue(e) })}>
            <option value="">none</option>
            {environments.map((x) => (
              <option key={x.id} value={x.id}>
                {environmentLabel(x)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Feature">
          <select value={f.feature} onChange={(e) => setF({ ...f, feature: inputValue(e) })}>
            <option value="">none</option>
            {features.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <StepsEditor text={text} kind={automation.kind} onChange={setText} details={a.details} />
      <ErrorNote message={a.error} details={a.details} />
      {stale && <StaleEdit noun="automation" before={base.record} now={stale} onReload={() => void onSaved()} onOverwrite={overwrite} />}
      <div class="row">
        <button class="btn btn-primary" disabled={a.busy || !steps}>
          Save automation
        </button>
      </div>
    </form>
  );
}

const activeRun = (r: Run) => r.status === "queued" || r.status === "running";

/** The fields the editor holds: a version that changes any of them is shown afresh, one that does not keeps the edits. */
const editedFields = (x: Automation) => JSON.stringify([x.name, x.description, x.tags, x.timeout_ms, x.retries, x.environment_id, x.feature_id, x.steps]);

/**
 * The automation's health read again whenever its runs change (one started or ended), for its health and pass rate.
 * Only the health is taken from that read: the editor keeps the version it shows (its unsaved edits are not dropped,
 * and a change made elsewhere is still reported when saved). Null until its runs have changed since it was loaded.
 */
function useHealthAfterRuns(project: string, automationId: string, loaded: Automation | null, runs: Run[] | null): Automation["health"] | null {
  const [health, setHealth] = useState<{ of: Automation; health: Automation["health"] } | null>(null);
  const seen = useRef<string | null>(null);
  const runsNow = runs === null ? null : `${automationId}|${runs.map((r) => `${r.id}:${r.status}`).join(",")}`;
  useEffect(() => {
    if (runsNow === null) return;
    const before = seen.current;
    seen.current = runsNow;
    if (before === null || before === runsNow || !before.startsWith(`${automationId}|`)) return;
    void call("getAutomation", { project, automationId })
      .then((fresh) => loaded && setHealth({ of: loaded, health: fresh.health }))
      .catch(() => undefined);
  }, [runsNow]);
  // A reload of the automation itself (after a change on this page) brings its health too.
  return health && health.of === loaded ? health.health : null;
}

export function AutomationPage({ project, automationId }: { project: string; automationId: string }) {
  const au = useLoad(() => call("getAutomation", { project, automationId }), `aut:${project}:${automationId}`);
  const envs = useLoad(() => allPages((cursor) => call("listEnvironments", { project, limit: 200, cursor })), `envs:${project}`);
  const features = useLoad(() => allPages((cursor) => call("listFeatures", { project, limit: 200, cursor })), `features:${project}`);
  // Its runs are followed (runs of it start and end elsewhere: CI, schedules); the sooner while one is active.
  const timeline = useLoad(
    () => call("listAutomationRuns", { project, automationId, limit: 50 }),
    `timeline:${project}:${automationId}`,
    (d) => (d.data.some(activeRun) ? 1500 : LIST_POLL_MS),
  );
  const health = useHealthAfterRuns(project, automationId, au.data, timeline.data?.data ?? null);
  const a = useAction();
  // Counts the editor's saves (and its "Reload"): each shows the stored version afresh, even one the server stored
  // unchanged or tidied (tags " a , b" stored as "a, b").
  const [saves, setSaves] = useState(0);
  const x = au.data && health ? { ...au.data, health } : au.data;
  const env = useRunEnvironment(project, x ? [x] : []);
  const setStatus = (status: Automation["status"]) =>
    a.run(async () => {
      await call("updateAutomation", { project, automationId, status });
      await au.reload();
    });
  const run = () =>
    a.run(async () => {
      env.remember();
      const r = await call("runAutomation", { project, automationId, environment: env.environment });
      navigate(`/p/${enc(project)}/runs/${r.id}`);
    });
  return (
    <ProjectFrame project={project} section="automations" title={x?.name ?? "Automation"}>
      {au.loading && <Loading />}
      <ErrorNote message={au.error} />
      {x && (
        <>
          <Card
            level={1}
            title={
              <>
                {x.name} <Badge status={x.status} />
              </>
            }
            actions={
              <>
                {x.status !== "active" && (
                  <button type="button" class="btn" onClick={() => void setStatus("active")}>
                    Activate
                  </button>
                )}
                <button
                  type="button"
                  class="btn"
                  onClick={() =>
                    void a.run(async () => {
                      await call("updateAutomation", { project, automationId, quarantined: !x.quarantined });
                      await au.reload();
                    })
                  }
                >
                  {x.quarantined ? "End quarantine" : "Quarantine"}
                </button>
                {x.status === "active" && (
                  <button type="button" class="btn" onClick={() => void setStatus("disabled")}>
                    Disable
                  </button>
                )}
                <ConfirmButton
                  label="Delete"
                  question="Delete this automation?"
                  onConfirm={() =>
                    void a.run(async () => {
                      await call("deleteAutomation", { project, automationId });
                      navigate(`/p/${enc(project)}/automations`, { settled: true });
                    })
                  }
                />
              </>
            }
          >
            <dl class="facts">
              <div>
                <dt>Kind</dt>
                <dd>{x.kind}</dd>
              </div>
              <div>
                <dt>Source</dt>
                <dd>{x.source}</dd>
              </div>
              <div>
                <dt>Feature</dt>
                <dd>{x.feature_id ? <a href={`#/p/${enc(project)}/features/${x.feature_id}`}>open feature</a> : "—"}</dd>
              </div>
              <div>
                <dt>Updated</dt>
                <dd>{when(x.updated_at)}</dd>
              </div>
              <div>
                <dt>Health</dt>
                <dd data-testid="health">
                  {x.health.state}
                  {x.quarantined ? " (quarantined: its failures do not fail group runs)" : ""}
                </dd>
              </div>
              <div>
                <dt>Pass rate</dt>
                <dd>
                  {x.health.pass_rate === null
                    ? "—"
                    : `${Math.round(x.health.pass_rate * 100)}% of the last ${x.health.runs === 1 ? "run" : `${x.health.runs} runs`}`}
                  {x.health.pass_rate_7d === null ? "" : ` · ${Math.round(x.health.pass_rate_7d * 100)}% in 7 days`}
                </dd>
              </div>
            </dl>
            <div class="form-row">
              {env.picker}
              <button type="button" class="btn btn-primary" disabled={a.busy || !env.ready} onClick={() => void run()}>
                Run now
              </button>
            </div>
            <ErrorNote message={a.error} details={a.details} />
          </Card>
          <Card title="Timeline of runs">
            {timeline.data && <RunTimeline runs={timeline.data.data} />}
            <ErrorNote message={timeline.error} />
          </Card>
          <div class="two-col">
            <Card title="Edit">
              <AutomationEditor
                key={`${saves}:${editedFields(x)}`}
                project={project}
                automation={x}
                environments={envs.data?.data ?? []}
                features={features.data?.data ?? []}
                onSaved={async () => {
                  await au.reload();
                  setSaves((n) => n + 1);
                }}
              />
            </Card>
            <Card title="Recent runs">
              <RecentRuns project={project} limit={10} automation={x.id} compact />
            </Card>
          </div>
        </>
      )}
    </ProjectFrame>
  );
}
