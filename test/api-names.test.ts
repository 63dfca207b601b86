// Names resolve in the core, the same on every surface: a project by id or slug, a feature, automation or group
// by id or exact name, in path segments and in list filters; a name shared by several is refused with their ids,
// one that names nothing is a 404 (in a filter too), and another workspace's names are never reached. Over REST and the CLI.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer } from "./helpers/server";

// The CLI is started from source a few times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;
let projectId = "";
const ids = { feature: "", login: "", group: "", twinA: "", run: "", groupRun: "" };

async function create(path: string, body: unknown, key?: string): Promise<string> {
  const res = await s.call("POST", path, body, key);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await s.call("GET", path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const listed = (body: Record<string, unknown>) => (body.data as { id: string }[]).map((r) => r.id).sort();

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  projectId = await create("/projects", { name: "Names", slug: "names" });
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  ids.feature = await create("/projects/names/features", { name: "Checkout" });
  ids.login = await create("/projects/names/automations", { name: "login works", kind: "http", steps, feature: ids.feature });
  ids.twinA = await create("/projects/names/automations", { name: "twin", kind: "http", steps });
  ids.group = await create("/projects/names/groups", { name: "smoke suite", automation_ids: [ids.login] });
  const run = await s.call("POST", "/projects/names/automations/login%20works/run", {});
  expect(run.status).toBe(202);
  ids.run = ((await run.json()) as { id: string }).id;
  const groupRun = await s.call("POST", "/projects/names/groups/smoke%20suite/run", {});
  expect(groupRun.status).toBe(202);
  ids.groupRun = ((await groupRun.json()) as { id: string }).id;

  // Another workspace with a project of the same slug and a feature of its own.
  const other = await s.userWithKey("owner@other.test", "other");
  await create("/projects", { name: "Names", slug: "names" }, other.key);
  await create("/projects/names/features", { name: "Their secret" }, other.key);

  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "names" });
});

afterAll(async () => {
  cli.remove();
  await s.stop();
});

test("a project by id or slug; a feature, automation and group by id or by exact name", async () => {
  expect((await get(`/projects/${projectId}`)).body.id).toBe(projectId);
  expect((await get("/projects/names")).body.id).toBe(projectId);
  for (const [path, id] of [
    [`/projects/names/features/${ids.feature}`, ids.feature],
    ["/projects/names/features/Checkout", ids.feature],
    [`/projects/${projectId}/features/Checkout/generation`, null],
    [`/projects/names/automations/${ids.login}`, ids.login],
    ["/projects/names/automations/login%20works", ids.login],
    [`/projects/names/groups/${ids.group}`, ids.group],
    ["/projects/names/groups/smoke%20suite", ids.group],
  ] as const) {
    const r = await get(path);
    if (id === null)
      expect({ path, status: r.status, message: r.body.message }).toEqual({
        path,
        status: 404,
        message: "generation (none was started for this feature) not found",
      });
    else expect({ path, status: r.status, id: r.body.id }).toEqual({ path, status: 200, id });
  }
  expect(listed((await get("/projects/names/automations/login%20works/runs")).body)).toContain(ids.run);
});

test("list filters take the exact name too: ?feature=, ?group=, ?automation=", async () => {
  expect(listed((await get("/projects/names/automations?feature=Checkout")).body)).toEqual([ids.login]);
  expect(listed((await get("/projects/names/automations?group=smoke%20suite")).body)).toEqual([ids.login]);
  expect(listed((await get("/projects/names/group-runs?group=smoke%20suite")).body)).toEqual([ids.groupRun]);
  const runs = listed((await get("/projects/names/runs?automation=login%20works")).body);
  expect(runs).toContain(ids.run);
  expect(runs).toHaveLength(2); // its own run and its run in the group run
  // A filter that names nothing is a 404 naming the filter, never a 400.
  expect(await get("/projects/names/automations?feature=No%20such%20feature")).toMatchObject({
    status: 404,
    body: { error: "not_found", message: 'feature "No such feature" not found in project names (filter feature: give its exact name, or its id fea_…)' },
  });
});

test("names are unique in a project: a second automation or group of a name is a 409 naming the existing one", async () => {
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  const twin = await s.call("POST", "/projects/names/automations", { name: "twin", kind: "http", steps });
  expect(twin.status).toBe(409);
  const body = (await twin.json()) as { error: string; message: string };
  expect(body.error).toBe("conflict");
  expect(body.message).toContain('an automation named "twin" already exists');
  expect(body.message).toContain(ids.twinA);
  expect((await s.call("PATCH", `/projects/names/automations/${ids.login}`, { name: "twin" })).status).toBe(409);
  const group = await s.call("POST", "/projects/names/groups", { name: "smoke suite" });
  expect(group.status).toBe(409);
  expect(((await group.json()) as { message: string }).message).toContain(ids.group);
  // So a name always names one: in the path and in a filter.
  expect((await get("/projects/names/automations/twin")).body.id).toBe(ids.twinA);
  expect((await get("/projects/names/runs?automation=twin")).status).toBe(200);
});

test("a name that matches nothing is a 404, and another workspace's names are never reached", async () => {
  expect(await get("/projects/names/groups/nightly")).toMatchObject({
    status: 404,
    body: { error: "not_found", message: 'no group named "nightly" in project names (give its name exactly, or its id grp_…)' },
  });
  expect((await get("/projects/names/features/Their%20secret")).status).toBe(404);
  expect((await get("/projects/names/automations?feature=Their%20secret")).status).toBe(404);
});

test("a name is itself, whatever it holds: %2F is not a slash, and a bare % is reachable", async () => {
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  const slash = await create("/projects/names/automations", { name: "release/1", kind: "http", steps });
  const encoded = await create("/projects/names/automations", { name: "release%2F1", kind: "http", steps });
  const percent = await create("/projects/names/automations", { name: "50% off", kind: "http", steps });
  for (const [name, id] of [
    ["release/1", slash],
    ["release%2F1", encoded],
    ["50% off", percent],
  ] as const)
    expect({ name, id: (await get(`/projects/names/automations/${encodeURIComponent(name)}`)).body.id }).toEqual({ name, id });
  // Through the CLI (which encodes each argument once), deleting one never reaches the other.
  const shown = await cli.run(["automations", "show", "50% off", "--json"]);
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.stdout).id).toBe(percent);
  expect((await cli.run(["automations", "delete", "release%2F1"])).code).toBe(0);
  expect((await get(`/projects/names/automations/${encoded}`)).status).toBe(404);
  expect((await get(`/projects/names/automations/${slash}`)).body.name).toBe("release/1");
  for (const id of [slash, percent]) expect((await s.call("DELETE", `/projects/names/automations/${id}`)).status).toBe(204);
});

test("a body's feature is named as a path's: by id or exact name; none or several are a 400 on body.feature", async () => {
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  const created = await s.call("POST", "/projects/names/automations", { name: "linked by name", kind: "http", steps, feature: "Checkout" });
  expect(created.status).toBe(201);
  const linked = (await created.json()) as { id: string; feature_id: string };
  expect(linked.feature_id).toBe(ids.feature);
  const other = await create("/projects/names/features", { name: "Payments" });
  const moved = await s.call("PATCH", `/projects/names/automations/${linked.id}`, { feature: "Payments" });
  expect(((await moved.json()) as { feature_id: string }).feature_id).toBe(other);

  const unknown = await s.call("PATCH", `/projects/names/automations/${linked.id}`, { feature: "Their secret" });
  expect(unknown.status).toBe(400);
  expect(await unknown.json()).toMatchObject({
    error: "invalid_request",
    message: 'no feature named "Their secret" in project names (give its name exactly, or its id fea_…)',
    details: [{ path: "body.feature" }],
  });
  const twin = await create("/projects/names/features", { name: "Payments" });
  const shared = await s.call("POST", "/projects/names/automations", { name: "ambiguous", kind: "http", steps, feature: "Payments" });
  expect(shared.status).toBe(400);
  const refusal = (await shared.json()) as { message: string; details: { path: string }[] };
  expect(refusal.message).toContain(other);
  expect(refusal.message).toContain(twin);
  expect(refusal.details[0]?.path).toBe("body.feature");
  // Nothing was changed by the refused requests.
  expect((await get(`/projects/names/automations/${linked.id}`)).body.feature_id).toBe(other);
  expect((await get("/projects/names/automations/ambiguous")).status).toBe(404);
  expect((await s.call("DELETE", `/projects/names/automations/${linked.id}`)).status).toBe(204);
  for (const id of [other, twin]) expect((await s.call("DELETE", `/projects/names/features/${id}`)).status).toBe(204);
});

test("through the CLI: names in arguments and filters; several or none are refused with the server's message", async () => {
  const show = await cli.run(["features", "show", "Checkout", "--json"]);
  expect(show.code).toBe(0);
  expect(JSON.parse(show.stdout)).toMatchObject({ id: ids.feature, name: "Checkout" });

  const runs = await cli.run(["runs", "list", "--automation", "login works", "--json"]);
  expect(runs.code).toBe(0);
  expect((JSON.parse(runs.stdout) as { data: { id: string }[] }).data.map((r) => r.id)).toContain(ids.run);

  const twin = await cli.run(["automations", "create", "--name", "twin", "--kind", "http", "--steps", '[{"request":{"url":"http://127.0.0.1:9/"}}]']);
  expect(twin.code).toBe(2);
  expect(twin.stderr).toContain('an automation named "twin" already exists');
  expect(twin.stderr).toContain(ids.twinA);

  const none = await cli.run(["groups", "show", "nightly"]);
  expect(none.code).toBe(4);
  expect(none.stderr).toContain('no group named "nightly" in project names');

  const help = await cli.run(["automations", "show", "--help"]);
  expect(help.stdout).toContain("Automation id (aut_…) or exact name");
});
