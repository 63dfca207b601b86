// A project's features: the list and the form that describes a new one.
import { useState } from "preact/hooks";
import { allPages, call, enc } from "../api";
import { useAction, useLoad } from "../hooks";
import { navigate } from "../router";
import { Card, Empty, ErrorNote, Field, inputValue, Loading, when } from "../ui";
import { ProjectFrame } from "./project-frame";

export function FeaturesPage({ project }: { project: string }) {
  const list = useLoad(() => allPages((cursor) => call("listFeatures", { project, limit: 200, cursor })), `features:${project}`);
  const [name, setName] = useState("");
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const f = await call("createFeature", { project, name });
      navigate(`/p/${enc(project)}/features/${f.id}`);
    });
  };
  return (
    <ProjectFrame project={project} section="features">
      <Card title="New feature">
        <form class="form-row" onSubmit={create}>
          <Field label="Feature name">
            <input required value={name} onInput={(e) => setName(inputValue(e))} placeholder="Checkout" />
          </Field>
          <button class="btn btn-primary" disabled={a.busy}>
            Create feature
          </button>
        </form>
        <ErrorNote message={a.error} details={a.details} />
      </Card>
      {list.loading && <Loading what="features" />}
      <ErrorNote message={list.error} />
      {list.data?.data.length === 0 && <Empty>No features yet.</Empty>}
      <div class="grid">
        {list.data?.data.map((f) => (
          <a key={f.id} class="tile" href={`#/p/${enc(project)}/features/${f.id}`}>
            <strong>{f.name}</strong>
            <span class="muted">{f.description.slice(0, 140) || "No description"}</span>
            <span class="tile-meta">
              {f.target ? (f.target.kind === "web" ? `web: ${f.target.url}` : "api") : "no target"} · updated {when(f.updated_at)}
            </span>
          </a>
        ))}
      </div>
    </ProjectFrame>
  );
}
