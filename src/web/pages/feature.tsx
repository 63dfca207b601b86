// One feature: edit its description, acceptance criteria and target; start generation and watch it live;
// see its warnings and the drafts it made.
import { useRef, useState } from "preact/hooks";
import { Strategy } from "../../manifest/records";
import { allPages, ApiError, call, enc } from "../api";
import { useAction, useLoad } from "../hooks";
import { navigate } from "../router";
import type { Automation, Feature, Generation } from "../types";
import { Badge, Card, ConfirmButton, Empty, ErrorNote, Field, inputValue, Loading, plural, when } from "../ui";
import { StaleEdit, useStaleGuard } from "../stale-edit";
import { savingEdits, useUnsavedEdits } from "../unsaved";
import { GherkinPreview } from "./gherkin";
import { ProjectFrame } from "./project-frame";
import { useRunEnvironment } from "./run-environment";

type TargetKind = "none" | "web" | "api";
const list = (s: string) =>
  s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);

/** What the feature page's form holds unsaved, and how to save it: Generate saves it first. */
export interface FormEdits {
  dirty: () => boolean;
  /** Saves the edits (from the version shown); false when they were not saved (stale, invalid: the form says why). */
  save: () => Promise<boolean>;
  /** The save on its way, if one is. */
  pending: () => Promise<boolean> | null;
}

function FeatureForm({
  project,
  feature,
  onSaved,
  edits,
}: {
  project: string;
  feature: Feature;
  onSaved: () => Promise<void>;
  edits?: { current: FormEdits | null };
}) {
  const t = feature.target;
  const [initial] = useState(() => ({
    name: feature.name,
    description: feature.description,
    acceptance_criteria: feature.acceptance_criteria,
    kind: (t?.kind ?? "none") as TargetKind,
    url: t?.kind === "web" ? t.url : "",
    tags: t?.kind === "api" ? t.tags.join(", ") : "",
    paths: t?.kind === "api" ? t.paths.join(", ") : "",
  }));
  const [f, setF] = useState(initial);
  const unsaved = useUnsavedEdits(f, initial);
  const dirty = JSON.stringify(f) !== JSON.stringify(initial);
  const a = useAction();
  const guard = useStaleGuard(feature, () => call("getFeature", { project, feature: feature.id }));
  const put = (ifMatch: string) => {
    const target =
      f.kind === "web" ? { kind: "web" as const, url: f.url } : f.kind === "api" ? { kind: "api" as const, tags: list(f.tags), paths: list(f.paths) } : null;
    return call("updateFeature", {
      project,
      feature: feature.id,
      if_match: ifMatch,
      name: f.name,
      description: f.description,
      acceptance_criteria: f.acceptance_criteria,
      target,
    });
  };
  // One save at a time: Generate waits for a save already on its way instead of sending a second from the same version.
  const inflight = useRef<Promise<boolean> | null>(null);
  const saveNow = () => {
    inflight.current ??= (async () => {
      let saved = false;
      await a.run(async () => {
        if ((await savingEdits(unsaved, () => guard.save(put))) === null) return;
        saved = true;
        await onSaved();
      });
      inflight.current = null;
      return saved;
    })();
    return inflight.current;
  };
  if (edits) edits.current = { dirty: () => dirty, save: saveNow, pending: () => inflight.current };
  const save = async (e: Event) => {
    e.preventDefault();
    await saveNow();
  };
  return (
    <form class="stack" onSubmit={save}>
      <Field label="Name">
        <input required value={f.name} onInput={(e) => setF({ ...f, name: inputValue(e) })} />
      </Field>
      <Field label="Description" hint="Markdown.">
        <textarea rows={4} value={f.description} onInput={(e) => setF({ ...f, description: inputValue(e) })} />
      </Field>
      <Field label="Acceptance criteria" hint="Gherkin (Scenario / Given / When / Then) or plain bullets.">
        <textarea class="mono" rows={8} value={f.acceptance_criteria} onInput={(e) => setF({ ...f, acceptance_criteria: inputValue(e) })} />
      </Field>
      <GherkinPreview text={f.acceptance_criteria} />
      <Field label="Target">
        <select value={f.kind} onChange={(e) => setF({ ...f, kind: inputValue(e) as TargetKind })}>
          <option value="none">none</option>
          <option value="web">a web page (URL)</option>
          <option value="api">API operations (from the project's OpenAPI document)</option>
        </select>
      </Field>
      {f.kind === "web" && (
        <Field label="Page URL">
          <input required value={f.url} onInput={(e) => setF({ ...f, url: inputValue(e) })} placeholder="https://shop.example.com/login" />
        </Field>
      )}
      {f.kind === "api" && (
        <div class="form-row">
          <Field label="OpenAPI tags" hint="Comma-separated.">
            <input value={f.tags} onInput={(e) => setF({ ...f, tags: inputValue(e) })} />
          </Field>
          <Field label="Paths" hint="Comma-separated, e.g. /items, /items/{id}">
            <input value={f.paths} onInput={(e) => setF({ ...f, paths: inputValue(e) })} />
          </Field>
        </div>
      )}
      <ErrorNote message={a.error} details={a.details} />
      {guard.stale && (
        <StaleEdit
          noun="feature"
          before={feature}
          now={guard.stale}
          onReload={() => void onSaved()}
          onOverwrite={() =>
            void a.run(async () => {
              if ((await guard.overwrite(put)) !== null) await onSaved();
            })
          }
        />
      )}
      <div class="row">
        <button class="btn btn-primary" disabled={a.busy}>
          Save feature
        </button>
      </div>
    </form>
  );
}

async function latestGeneration(project: string, feature: string, wait: number): Promise<Generation | null> {
  try {
    return await call("getGeneration", { project, feature, wait });
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/**
 * One warning of a generation: its message, with its line, the line's text and the suggested phrase added only where
 * the message does not already say them (the Gherkin generator's messages name all three).
 */
function GenerationWarningText({ warning: w }: { warning: Generation["warnings"][number] }) {
  const says = (part: string) => w.message.toLowerCase().includes(part.toLowerCase());
  return (
    <>
      {w.line !== undefined && !says(`line ${w.line}`) && (
        <>
          <code>line {w.line}</code>{" "}
        </>
      )}
      {w.message}
      {w.text && !says(w.text) && (
        <>
          {" "}
          — <code>{w.text}</code>
        </>
      )}
      {w.suggestion && !says(w.suggestion) && <em> (try: {w.suggestion})</em>}
    </>
  );
}

function GenerationPanel({
  project,
  feature,
  hasGeneration,
  edits,
}: {
  project: string;
  feature: string;
  /** The feature record names a generation (latest_generation): only then is there one to read. */
  hasGeneration: boolean;
  edits: { current: FormEdits | null };
}) {
  // Asked of a feature without one, the server answers 404, which the browser logs as an error: not asked then.
  const [started, setStarted] = useState(false);
  const known = hasGeneration || started;
  const gen = useLoad(
    (wait) => (known ? latestGeneration(project, feature, wait) : Promise.resolve(null)),
    `gen:${project}:${feature}:${known}`,
    (g) => (g && (g.status === "queued" || g.status === "running") ? 1000 : 0),
    true,
  );
  const drafts = useLoad(
    () => allPages((cursor) => call("listAutomations", { project, limit: 200, cursor, feature })),
    `drafts:${feature}:${gen.data?.status ?? ""}`,
  );
  const [strategy, setStrategy] = useState<Generation["strategy"]>("auto");
  const a = useAction();
  const g = gen.data;
  const live = g && (g.status === "queued" || g.status === "running");
  const made = new Set(g?.automation_ids ?? []);
  const start = () =>
    a.run(async () => {
      // Generation reads the stored feature: edits on screen are saved first, never silently left out.
      const form = edits.current;
      const sent = form?.pending();
      if (sent && !(await sent))
        throw new Error("The feature's edits on screen could not be saved (see the form above), so generation was not started: it would use the old text.");
      if (!sent && form?.dirty() && !(await form.save())) {
        throw new Error("The feature's edits on screen could not be saved (see the form above), so generation was not started: it would use the old text.");
      }
      await call("startGeneration", { project, feature, strategy });
      if (known) await gen.reload();
      else setStarted(true);
    });
  return (
    <Card title="Generation">
      <div class="form-row">
        <Field label="Strategy">
          <select value={strategy} onChange={(e) => setStrategy(inputValue(e) as Generation["strategy"])}>
            {Strategy.options.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
        <button type="button" class="btn btn-primary" disabled={a.busy || !!live} onClick={() => void start()}>
          Generate automations
        </button>
        {live && (
          <button
            type="button"
            class="btn"
            onClick={() =>
              void a.run(async () => {
                await call("cancelGeneration", { project, feature });
                await gen.reload();
              })
            }
          >
            Cancel
          </button>
        )}
      </div>
      <ErrorNote message={a.error ?? gen.error} details={a.details} />
      {g && (
        <div class="stack" data-testid="generation">
          <div class="row">
            <Badge status={g.status} />
            <span>{g.strategy}</span>
            <span class="muted">started {when(g.started_at ?? g.created_at)}</span>
          </div>
          {live && (
            <div class="progress" role="progressbar" aria-valuemin={0} aria-valuemax={g.progress.total} aria-valuenow={g.progress.done}>
              <div class="progress-bar" style={{ width: `${g.progress.total ? Math.round((100 * g.progress.done) / g.progress.total) : 10}%` }} />
              <span>
                {g.progress.stage} {g.progress.done}/{g.progress.total}
              </span>
            </div>
          )}
          {g.result && <p>{g.result}</p>}
          {g.error && <div class="note note-error">{g.error}</div>}
          {g.warnings.length > 0 && (
            <div class="note note-warn">
              <strong>
                {g.warnings.length} warning{g.warnings.length > 1 ? "s" : ""}
              </strong>
              <ul class="details">
                {g.warnings.map((w, i) => (
                  <li key={i}>
                    <GenerationWarningText warning={w} />
                  </li>
                ))}
              </ul>
            </div>
          )}
        </div>
      )}
      <FeatureAutomations project={project} feature={feature} list={drafts.data?.data ?? null} made={made} onChanged={drafts.reload} />
    </Card>
  );
}

/** The feature's automations, with the two things done to a fresh batch of drafts: activate them all, run them all. */
function FeatureAutomations({
  project,
  feature,
  list,
  made,
  onChanged,
}: {
  project: string;
  feature: string;
  list: Automation[] | null;
  made: Set<string>;
  onChanged: () => Promise<void>;
}) {
  const bulk = useAction();
  const drafts = (list ?? []).filter((d) => d.status === "draft");
  const runnable = (list ?? []).filter((d) => d.status !== "disabled");
  const activateAll = () =>
    bulk.run(async () => {
      await call("activateFeatureDrafts", { project, feature });
      await onChanged();
    });
  const env = useRunEnvironment(project, runnable);
  const runAll = () =>
    bulk.run(async () => {
      env.remember();
      // Its automations run as one group run: its page follows them, as Run group's does.
      const started = await call("runFeature", { project, feature, environment: env.environment });
      navigate(`/p/${enc(project)}/group-runs/${started.id}`);
    });
  return (
    <>
      <h3>Automations of this feature</h3>
      {list?.length === 0 && <Empty>None yet.</Empty>}
      <ul class="links">
        {list?.map((d) => (
          <li key={d.id}>
            <a href={`#/p/${enc(project)}/automations/${d.id}`}>{d.name}</a> <Badge status={d.status} />{" "}
            <span class="muted">
              {d.kind}
              {made.has(d.id) ? " · from the latest generation" : ""}
            </span>
          </li>
        ))}
      </ul>
      {runnable.length > 0 && (
        <div class="row">
          {drafts.length > 0 && (
            <button type="button" class="btn" disabled={bulk.busy} onClick={() => void activateAll()}>
              Activate {plural(drafts.length, "draft")}
            </button>
          )}
          {env.picker}
          <button type="button" class="btn" disabled={bulk.busy || !env.ready} onClick={() => void runAll()}>
            Run {runnable.length === 1 ? "it" : `all ${runnable.length}`}
          </button>
        </div>
      )}
      <ErrorNote message={bulk.error} details={bulk.details} />
    </>
  );
}

export function FeaturePage({ project, feature }: { project: string; feature: string }) {
  const f = useLoad(() => call("getFeature", { project, feature }), `feature:${project}:${feature}`);
  const edits = useRef<FormEdits | null>(null);
  const a = useAction();
  return (
    <ProjectFrame project={project} section="features" title={f.data?.name ?? "Feature"}>
      {f.loading && <Loading />}
      <ErrorNote message={f.error ?? a.error} />
      {f.data && (
        <div class="two-col">
          <Card
            level={1}
            title={f.data.name}
            actions={
              <ConfirmButton
                label="Delete"
                question="Delete this feature?"
                onConfirm={() =>
                  void a.run(async () => {
                    await call("deleteFeature", { project, feature });
                    navigate(`/p/${enc(project)}/features`, { settled: true });
                  })
                }
              />
            }
          >
            <FeatureForm key={f.data.updated_at} project={project} feature={f.data} onSaved={f.reload} edits={edits} />
          </Card>
          <GenerationPanel project={project} feature={f.data.id} hasGeneration={f.data.latest_generation !== null} edits={edits} />
        </div>
      )}
    </ProjectFrame>
  );
}
