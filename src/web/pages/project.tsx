// A project's overview: its trend and the automations failing or flaky now; edit its name, slug and description, attach or remove its OpenAPI document, delete it.
import { call } from "../api";
import { useAction, useEdits, useLoad } from "../hooks";
import { navigate } from "../router";
import { canAdminister, useSession } from "../session";
import { Card, ConfirmButton, ErrorNote, Field, inputValue, Loading } from "../ui";
import { StaleEdit, useStaleGuard } from "../stale-edit";
import { savingEdits, useUnsavedEdits } from "../unsaved";
import { ProjectFrame } from "./project-frame";
import { ProjectHealth } from "./health";
import { RecentRuns } from "./runs";

/**
 * An OpenAPI document from a file: JSON for a .json file (its JSON error when it is not), YAML for any other (YAML
 * is a superset of JSON, so a .yaml file holding JSON reads too).
 */
async function readOpenApiFile(file: File): Promise<Record<string, unknown>> {
  const text = await file.text();
  if (/\.json$/i.test(file.name)) {
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`${file.name} is not valid JSON: ${(e as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    const { parse } = await import("yaml");
    try {
      return parse(text) as Record<string, unknown>;
    } catch (e) {
      throw new Error(`${file.name} is not valid YAML: ${(e as Error).message}`);
    }
  }
}

export function ProjectPage({ project }: { project: string }) {
  const p = useLoad(() => call("getProject", { project }), `project:${project}`);
  // Only owners and admins may delete a project: members are not offered it.
  const admin = canAdminister(useSession().session);
  const form = useEdits({ name: p.data?.name ?? "", slug: p.data?.slug ?? "", description: p.data?.description ?? "" });
  const f = form.value;
  const unsaved = useUnsavedEdits(f, p.data ? { name: p.data.name, slug: p.data.slug, description: p.data.description } : f);
  const a = useAction();
  const doc = useAction();
  const guard = useStaleGuard(p.data, () => call("getProject", { project }));
  const put = (ifMatch: string) => call("updateProject", { project, if_match: ifMatch, ...f });
  const saved = async (updated: Awaited<ReturnType<typeof put>> | null) => {
    if (updated === null) return;
    if (updated.slug !== project) navigate(`/p/${updated.slug}`, { settled: true });
    else await p.reload();
    form.reset();
  };
  const save = async (e: Event) => {
    e.preventDefault();
    await a.run(async () => saved(await savingEdits(unsaved, () => guard.save(put))));
  };
  const upload = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0];
    if (!file) return;
    await doc.run(async () => {
      await call("updateProject", { project, openapi: await readOpenApiFile(file) });
      await p.reload();
    });
  };
  const info =
    p.data?.openapi && typeof p.data.openapi.info === "object" && p.data.openapi.info ? (p.data.openapi.info as { title?: string; version?: string }) : null;
  return (
    <ProjectFrame project={project} section="overview">
      {p.loading && <Loading />}
      <ErrorNote message={p.error} />
      {p.data && (
        <div class="two-col">
          <Card title="Project">
            <form class="stack" onSubmit={save}>
              <Field label="Name">
                <input required value={f.name} onInput={(e) => form.edit({ name: inputValue(e) })} />
              </Field>
              <Field label="Slug" hint="Used in URLs and by the CLI.">
                <input required value={f.slug} onInput={(e) => form.edit({ slug: inputValue(e) })} />
              </Field>
              <Field label="Description">
                <textarea rows={4} value={f.description} onInput={(e) => form.edit({ description: inputValue(e) })} />
              </Field>
              <ErrorNote message={a.error} details={a.details} />
              {guard.stale && (
                <StaleEdit
                  noun="project"
                  before={p.data}
                  now={guard.stale}
                  onReload={() =>
                    void p.reload().then(() => {
                      form.reset();
                      guard.dismiss();
                    })
                  }
                  onOverwrite={() => void a.run(async () => saved(await guard.overwrite(put)))}
                />
              )}
              <div class="row">
                <button class="btn btn-primary" disabled={a.busy}>
                  Save
                </button>
              </div>
            </form>
          </Card>
          <div class="stack-lg">
            <ProjectHealth project={project} />
            <Card title="OpenAPI document">
              {p.data.has_openapi ? (
                <p>Attached{info ? `: ${info.title ?? "untitled"} ${info.version ?? ""}` : ""}. Generation uses it for API features.</p>
              ) : (
                <p class="muted">None. Upload the OpenAPI document (JSON or YAML) of the system under test to generate API tests from it.</p>
              )}
              <div class="row">
                <label class="btn">
                  Upload OpenAPI file
                  <input type="file" accept=".json,.yaml,.yml,application/json" class="visually-hidden" onChange={upload} aria-label="OpenAPI file" />
                </label>
                {p.data.has_openapi && (
                  <ConfirmButton
                    label="Remove"
                    question="Remove the OpenAPI document?"
                    onConfirm={() =>
                      void doc.run(async () => {
                        await call("updateProject", { project, openapi: null });
                        await p.reload();
                      })
                    }
                  />
                )}
              </div>
              <ErrorNote message={doc.error} details={doc.details} />
            </Card>
            <Card title="Recent runs">
              <RecentRuns project={project} limit={5} compact />
            </Card>
            {admin && (
              <Card title="Danger zone">
                <p class="muted">Deleting the project deletes its features, automations, runs and environments.</p>
                <ConfirmButton
                  label="Delete project"
                  question={`Delete ${p.data.name} and everything in it?`}
                  onConfirm={() =>
                    void a.run(async () => {
                      await call("deleteProject", { project });
                      navigate("/projects", { settled: true });
                    })
                  }
                />
              </Card>
            )}
          </div>
        </div>
      )}
    </ProjectFrame>
  );
}
