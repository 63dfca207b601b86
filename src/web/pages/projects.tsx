// The project list and the form that creates a project.
import { useState } from "preact/hooks";
import { allPages, call } from "../api";
import { useAction, useLoad } from "../hooks";
import { navigate } from "../router";
import { Card, Empty, ErrorNote, Field, inputValue, Loading, PageTitle, when } from "../ui";

export function ProjectsPage() {
  const list = useLoad(() => allPages((cursor) => call("listProjects", { limit: 200, cursor })), "projects");
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const a = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => {
      const p = await call("createProject", { name, description });
      navigate(`/p/${p.slug}`);
    });
  };
  return (
    <div class="stack-lg">
      <PageTitle title="Projects" />
      <Card title="New project">
        <form class="form-row" onSubmit={create}>
          <Field label="Project name">
            <input required value={name} onInput={(e) => setName(inputValue(e))} placeholder="Shop API" />
          </Field>
          <Field label="Description">
            <input value={description} onInput={(e) => setDescription(inputValue(e))} />
          </Field>
          <button class="btn btn-primary" disabled={a.busy}>
            Create project
          </button>
        </form>
        <ErrorNote message={a.error} details={a.details} />
      </Card>
      {list.loading && <Loading what="projects" />}
      <ErrorNote message={list.error} />
      {list.data && list.data.data.length === 0 && <Empty>No projects yet: create the first one above.</Empty>}
      <div class="grid">
        {list.data?.data.map((p) => (
          <a key={p.id} class="tile" href={`#/p/${p.slug}`}>
            <strong>{p.name}</strong>
            <span class="muted">{p.description || "No description"}</span>
            <span class="tile-meta">
              {p.slug} · {p.has_openapi ? "OpenAPI attached · " : ""}created {when(p.created_at)}
            </span>
          </a>
        ))}
      </div>
    </div>
  );
}
