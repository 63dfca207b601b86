// A project's automations: filtered by feature, group, status, kind and text; and a form to create one.
import { useEffect, useRef, useState } from "preact/hooks";
import { AutomationKind, AutomationStatus } from "../../manifest/index";
import { allPages, call, chosen, enc } from "../api";
import type { Automation } from "../types";
import { useAction, useLoad } from "../hooks";
import { navigate, setHashQuery, useHashQuery } from "../router";
import { Badge, Card, Empty, ErrorNote, Field, inputValue, Loading, when } from "../ui";
import { ProjectFrame } from "./project-frame";
import { useRunEnvironment } from "./run-environment";
import { checkSteps, StepsEditor } from "./steps-editor";

const EXAMPLE_HTTP = JSON.stringify([{ name: "health", request: { method: "GET", url: "/health" }, expect: [{ status: 200 }] }], null, 2);
const EXAMPLE_BROWSER = JSON.stringify([{ goto: "/" }, { expect: { title: "Home" } }, { screenshot: "home" }], null, 2);

function CreateAutomation({ project, onCancel }: { project: string; onCancel: () => void }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<Automation["kind"]>("http");
  const [text, setText] = useState(EXAMPLE_HTTP);
  const a = useAction();
  // Opened, the form takes the focus (its button is gone): typing starts with its name.
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const create = async (e: Event) => {
    e.preventDefault();
    const { steps } = checkSteps(text, kind);
    if (!steps) return;
    await a.run(async () => {
      const created = await call("createAutomation", { project, name, kind, steps });
      navigate(`/p/${enc(project)}/automations/${created.id}`);
    });
  };
  return (
    <Card title="New automation">
      <form class="stack" onSubmit={create}>
        <div class="form-row">
          <Field label="Name">
            <input required ref={first} value={name} onInput={(e) => setName(inputValue(e))} />
          </Field>
          <Field label="Kind">
            <select
              value={kind}
              onChange={(e) => {
                const k = inputValue(e) as Automation["kind"];
                setKind(k);
                setText(k === "http" ? EXAMPLE_HTTP : EXAMPLE_BROWSER);
              }}
            >
              {AutomationKind.options.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
          </Field>
        </div>
        <StepsEditor text={text} kind={kind} onChange={setText} details={a.details} />
        <ErrorNote message={a.error} details={a.details} />
        <div class="row">
          <button class="btn btn-primary" disabled={a.busy || checkSteps(text, kind).steps === null}>
            Create automation
          </button>
          <button type="button" class="btn" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </Card>
  );
}

/**
 * Runs the automations picked in the list, or all shown when none of those shown is, as one group run in the chosen
 * environment. Picks a filter has hidden do not count: they are not run unseen, and they do not take the button away.
 */
function RunShown({ project, shown, picked }: { project: string; shown: Automation[]; picked: Set<string> }) {
  const pickedShown = shown.filter((x) => picked.has(x.id));
  const runnable = (pickedShown.length > 0 ? pickedShown : shown).filter((x) => x.status !== "disabled");
  const env = useRunEnvironment(project, runnable);
  const a = useAction();
  if (runnable.length === 0) return null;
  const run = () =>
    a.run(async () => {
      env.remember();
      const gr = await call("runSelection", { project, automations: runnable.map((x) => x.id), environment: env.environment });
      navigate(`/p/${enc(project)}/group-runs/${gr.id}`);
    });
  return (
    <div class="form-row">
      {env.picker}
      <button type="button" class="btn" disabled={a.busy || !env.ready} onClick={() => void run()}>
        {pickedShown.length > 0 ? `Run selected (${runnable.length})` : `Run all shown (${runnable.length})`}
      </button>
      <ErrorNote message={a.error} details={a.details} />
    </div>
  );
}

interface Filters {
  feature: string;
  group: string;
  status: Automation["status"] | "";
  kind: Automation["kind"] | "";
  q: string;
}

export function AutomationsPage({ project }: { project: string }) {
  // The filters are in the URL: Back returns to the previous ones, and a link shows the same list.
  const query = useHashQuery();
  const filters: Filters = {
    feature: query.get("feature") ?? "",
    group: query.get("group") ?? "",
    status: (query.get("status") ?? "") as Filters["status"],
    kind: (query.get("kind") ?? "") as Filters["kind"],
    q: query.get("q") ?? "",
  };
  const [creating, setCreating] = useState(false);
  // Closing the new-automation form brings the focus back to the button that opened it.
  const opener = useRef<HTMLButtonElement>(null);
  const toggled = useRef(false);
  useEffect(() => {
    if (toggled.current && !creating) opener.current?.focus();
  }, [creating]);
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const toggle = (id: string) => {
    const next = new Set(picked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };
  const list = useLoad(
    () =>
      allPages((cursor) =>
        call("listAutomations", {
          project,
          limit: 200,
          cursor,
          feature: chosen(filters.feature),
          group: chosen(filters.group),
          status: chosen(filters.status),
          kind: chosen(filters.kind),
          q: chosen(filters.q),
        }),
      ),
    `automations:${project}:${JSON.stringify(filters)}`,
  );
  const features = useLoad(() => allPages((cursor) => call("listFeatures", { project, limit: 200, cursor })), `f:${project}`);
  const groups = useLoad(() => allPages((cursor) => call("listGroups", { project, limit: 200, cursor })), `g:${project}`);
  // Typing in the search field replaces the history entry; choosing in a list adds one.
  const set = (k: keyof Filters) => (e: Event) => setHashQuery({ [k]: (e.currentTarget as HTMLInputElement).value }, k !== "q");
  return (
    <ProjectFrame project={project} section="automations">
      {creating ? (
        <CreateAutomation
          project={project}
          onCancel={() => {
            toggled.current = true;
            setCreating(false);
          }}
        />
      ) : (
        <div class="row">
          <button type="button" class="btn btn-primary" ref={opener} onClick={() => setCreating(true)}>
            New automation
          </button>
        </div>
      )}
      <div class="filters">
        <Field label="Search">
          <input type="search" value={filters.q} onInput={set("q")} placeholder="name or description" />
        </Field>
        <Field label="Feature">
          <select value={filters.feature} onChange={set("feature")}>
            <option value="">any</option>
            {features.data?.data.map((f) => (
              <option key={f.id} value={f.id}>
                {f.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Group">
          <select value={filters.group} onChange={set("group")}>
            <option value="">any</option>
            {groups.data?.data.map((g) => (
              <option key={g.id} value={g.id}>
                {g.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Status">
          <select value={filters.status} onChange={set("status")}>
            <option value="">any</option>
            {AutomationStatus.options.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </Field>
        <Field label="Kind">
          <select value={filters.kind} onChange={set("kind")}>
            <option value="">any</option>
            {AutomationKind.options.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </Field>
      </div>
      {list.loading && <Loading what="automations" />}
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Empty>No automations match.</Empty>}
      {list.data?.next_cursor && (
        <p class="muted" data-testid="list-cut">
          Showing the first {list.data.data.length} automations: narrow the list with the filters above.
        </p>
      )}
      {list.data && list.data.data.length > 0 && <RunShown project={project} shown={list.data.data} picked={picked} />}
      {list.data && list.data.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>
                  <span class="sr-only">Select</span>
                </th>
                <th>Name</th>
                <th>Kind</th>
                <th>Status</th>
                <th>Source</th>
                <th>Last run</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((x) => (
                <tr key={x.id} data-automation={x.name}>
                  <td data-label="Select">
                    <input type="checkbox" aria-label={`Select ${x.name}`} checked={picked.has(x.id)} onChange={() => toggle(x.id)} />
                  </td>
                  <td data-label="Name">
                    <a href={`#/p/${enc(project)}/automations/${x.id}`}>{x.name}</a>
                  </td>
                  <td data-label="Kind" class="whole-words">
                    {x.kind}
                  </td>
                  <td data-label="Status">
                    <span class="badges">
                      <Badge status={x.status} />
                      {x.quarantined && (
                        <>
                          {" "}
                          <span class="badge badge-quarantined" title="Quarantined: it still runs, but its failures do not fail its group runs or the CLI">
                            quarantined
                          </span>
                        </>
                      )}
                    </span>
                  </td>
                  <td data-label="Source" class="muted whole-words">
                    {x.source}
                  </td>
                  <td data-label="Last run">
                    {x.last_run ? (
                      <a href={`#/p/${enc(project)}/runs/${x.last_run.id}`}>
                        <Badge status={x.last_run.status} />
                      </a>
                    ) : (
                      <span class="muted">never</span>
                    )}
                  </td>
                  <td data-label="Updated" class="whole-words">
                    {when(x.updated_at)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </ProjectFrame>
  );
}
