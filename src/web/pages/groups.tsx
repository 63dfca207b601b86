// Groups: the list, a form to create one, and one group's page (order its automations, run it, its runs).
import { useState } from "preact/hooks";
import { allPages, call, enc } from "../api";
import { LIST_POLL_MS, useAction, useEdits, useLoad } from "../hooks";
import { navigate } from "../router";
import { Badge, Card, ConfirmButton, Empty, ErrorNote, Field, inputValue, Loading, duration, when } from "../ui";
import { StaleEdit, useStaleGuard } from "../stale-edit";
import { savingEdits, useUnsavedEdits } from "../unsaved";
import { useRunEnvironment } from "./run-environment";
import { ProjectFrame } from "./project-frame";

export function GroupsPage({ project }: { project: string }) {
  const list = useLoad(() => allPages((cursor) => call("listGroups", { project, limit: 200, cursor })), `groups:${project}`);
  const [name, setName] = useState("");
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const g = await call("createGroup", { project, name });
      navigate(`/p/${enc(project)}/groups/${g.id}`);
    });
  };
  return (
    <ProjectFrame project={project} section="groups">
      <Card title="New group">
        <form class="form-row" onSubmit={create}>
          <Field label="Group name">
            <input required value={name} onInput={(e) => setName(inputValue(e))} placeholder="smoke" />
          </Field>
          <button class="btn btn-primary" disabled={a.busy}>
            Create group
          </button>
        </form>
        <ErrorNote message={a.error} details={a.details} />
      </Card>
      {list.loading && <Loading />}
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Empty>No groups yet.</Empty>}
      <div class="grid">
        {list.data?.data.map((g) => (
          <a key={g.id} class="tile" href={`#/p/${enc(project)}/groups/${g.id}`}>
            <strong>{g.name}</strong>
            <span class="muted">{g.description || `${g.automation_ids.length} automation${g.automation_ids.length === 1 ? "" : "s"}`}</span>
          </a>
        ))}
      </div>
    </ProjectFrame>
  );
}

export function GroupRunList({ project, group }: { project: string; group?: string }) {
  const runs = useLoad(
    () => call("listGroupRuns", { project, limit: 20, group: group || undefined }),
    `group-runs:${project}:${group ?? ""}`,
    (d) => (d.data.some((r) => r.status === "queued" || r.status === "running") ? 1500 : LIST_POLL_MS),
  );
  if (runs.loading) return <Loading />;
  if (runs.error) return <ErrorNote message={runs.error} />;
  if (!runs.data?.data.length) return <Empty>No group runs yet.</Empty>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th>Status</th>
            <th>Group</th>
            <th>Started</th>
            <th>Duration</th>
            <th>Results</th>
          </tr>
        </thead>
        <tbody>
          {runs.data.data.map((r) => (
            <tr key={r.id}>
              <td data-label="Status">
                <a href={`#/p/${enc(project)}/group-runs/${r.id}`}>
                  <Badge status={r.status} />
                </a>
              </td>
              <td data-label="Group">
                <a href={`#/p/${enc(project)}/group-runs/${r.id}`}>{r.group_name}</a>
              </td>
              <td data-label="Started" class="whole-words">
                {when(r.started_at ?? r.created_at)}
              </td>
              <td data-label="Duration" class="whole-words">
                {duration(r.duration_ms)}
              </td>
              <td data-label="Results" class="whole-words">
                {r.summary.passed}/{r.summary.total} passed
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function GroupPage({ project, groupId }: { project: string; groupId: string }) {
  const g = useLoad(() => call("getGroup", { project, groupId }), `group:${groupId}`);
  const all = useLoad(() => allPages((cursor) => call("listAutomations", { project, limit: 200, cursor })), `all-aut:${project}`);
  const form = useEdits({ name: g.data?.name ?? "", description: g.data?.description ?? "", automation_ids: g.data?.automation_ids ?? [] });
  const f = form.value;
  const ids = f.automation_ids;
  const setOrder = (automation_ids: string[]) => form.edit({ automation_ids });
  const [pick, setPick] = useState("");
  const a = useAction();
  const byId = new Map((all.data?.data ?? []).map((x) => [x.id, x]));
  const move = (i: number, d: number) => {
    const next = [...ids];
    const [item] = next.splice(i, 1);
    if (item === undefined) return;
    next.splice(i + d, 0, item);
    setOrder(next);
  };
  const guard = useStaleGuard(g.data, () => call("getGroup", { project, groupId }));
  const put = (ifMatch: string) => call("updateGroup", { project, groupId, if_match: ifMatch, ...f });
  const saved = async (answer: unknown) => {
    if (answer === null) return;
    await g.reload();
    form.reset();
  };
  const save = () => a.run(async () => saved(await savingEdits(unsaved, () => guard.save(put))));
  const members = ids.map((id) => byId.get(id)).filter((x) => x !== undefined && x.status !== "disabled");
  const env = useRunEnvironment(project, members as { environment_id: string | null }[]);
  const run = () =>
    a.run(async () => {
      env.remember();
      const gr = await call("runGroup", { project, groupId, environment: env.environment });
      navigate(`/p/${enc(project)}/group-runs/${gr.id}`);
    });
  const dirty = g.data
    ? JSON.stringify(ids) !== JSON.stringify(g.data.automation_ids) || f.name !== g.data.name || f.description !== g.data.description
    : false;
  const unsaved = useUnsavedEdits(
    { name: f.name, description: f.description, ids },
    g.data ? { name: g.data.name, description: g.data.description, ids: g.data.automation_ids } : { name: f.name, description: f.description, ids },
  );
  return (
    <ProjectFrame project={project} section="groups" title={g.data?.name ?? "Group"}>
      {g.loading && <Loading />}
      <ErrorNote message={g.error} />
      {g.data && (
        <>
          <Card
            level={1}
            title={g.data.name}
            actions={
              <>
                {env.picker}
                <button
                  type="button"
                  class="btn btn-primary"
                  disabled={a.busy || dirty || ids.length === 0 || !env.ready}
                  onClick={() => void run()}
                  title={dirty ? "Save first" : undefined}
                >
                  Run group
                </button>
                <ConfirmButton
                  label="Delete"
                  question="Delete this group?"
                  onConfirm={() =>
                    void a.run(async () => {
                      await call("deleteGroup", { project, groupId });
                      navigate(`/p/${enc(project)}/groups`, { settled: true });
                    })
                  }
                />
              </>
            }
          >
            <div class="form-row">
              <Field label="Name">
                <input value={f.name} onInput={(e) => form.edit({ name: inputValue(e) })} />
              </Field>
              <Field label="Description">
                <input value={f.description} onInput={(e) => form.edit({ description: inputValue(e) })} />
              </Field>
            </div>
            <h3>Automations, in run order</h3>
            {ids.length === 0 && <Empty>No automations yet: add some below.</Empty>}
            <ol class="ordered">
              {ids.map((id, i) => {
                // Each button names its automation: a screen reader's list of buttons otherwise reads "Move up" ten times.
                const name = byId.get(id)?.name ?? id;
                return (
                  <li key={id}>
                    <span class="grow">
                      {name} {byId.get(id) && <Badge status={byId.get(id)?.status ?? ""} />}
                    </span>
                    <button type="button" class="btn btn-small" aria-label={`Move ${name} up`} disabled={i === 0} onClick={() => move(i, -1)}>
                      ↑
                    </button>
                    <button type="button" class="btn btn-small" aria-label={`Move ${name} down`} disabled={i === ids.length - 1} onClick={() => move(i, 1)}>
                      ↓
                    </button>
                    <button
                      type="button"
                      class="btn btn-small"
                      aria-label={`Remove ${name} from the group`}
                      onClick={() => setOrder(ids.filter((x) => x !== id))}
                    >
                      ✕
                    </button>
                  </li>
                );
              })}
            </ol>
            <div class="form-row">
              <Field label="Add automation">
                <select value={pick} onChange={(e) => setPick(inputValue(e))}>
                  <option value="">choose…</option>
                  {(all.data?.data ?? [])
                    .filter((x) => !ids.includes(x.id))
                    .map((x) => (
                      <option key={x.id} value={x.id}>
                        {x.name}
                      </option>
                    ))}
                </select>
              </Field>
              <button
                type="button"
                class="btn"
                disabled={!pick}
                onClick={() => {
                  setOrder([...ids, pick]);
                  setPick("");
                }}
              >
                Add
              </button>
              <button type="button" class="btn btn-primary" disabled={!dirty || a.busy} onClick={() => void save()}>
                Save group
              </button>
            </div>
            <ErrorNote message={a.error} details={a.details} />
            {guard.stale && (
              <StaleEdit
                noun="group"
                before={g.data}
                now={guard.stale}
                onReload={() =>
                  void g.reload().then(() => {
                    form.reset();
                    guard.dismiss();
                  })
                }
                onOverwrite={() => void a.run(async () => saved(await guard.overwrite(put)))}
              />
            )}
          </Card>
          <Card title="Group runs">
            <GroupRunList project={project} group={groupId} />
          </Card>
        </>
      )}
    </ProjectFrame>
  );
}
