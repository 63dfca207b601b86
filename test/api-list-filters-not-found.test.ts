// A list filter that names a resource (automation, runner, group run, group, feature) is answered as the docs
// promise: one naming nothing in this project (or this workspace, for runners), another workspace's included, is a
// 404 whose message names the filter (CLI exit 4); one naming an existing resource without matching rows is an
// empty page (gh: no results exits 0). Over REST and the CLI.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer } from "./helpers/server";

// The CLI is started from source; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;
let otherKey = "";
const ours = { login: "", idle: "", gone: "", goneRun: "", groupRun: "", runner: "" };
const theirs = { feature: "", automation: "", group: "", groupRun: "", runner: "" };

async function create(path: string, body: unknown, key?: string, status = 201): Promise<string> {
  const res = await s.call("POST", path, body, key);
  if (res.status !== status) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await s.call("GET", path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  await create("/projects", { name: "Shop", slug: "shop" });
  const checkout = await create("/projects/shop/features", { name: "Checkout" });
  await create("/projects/shop/features", { name: "Empty feature" });
  ours.login = await create("/projects/shop/automations", { name: "login", kind: "http", steps, feature: checkout });
  ours.idle = await create("/projects/shop/automations", { name: "idle", kind: "http", steps });
  const smoke = await create("/projects/shop/groups", { name: "smoke", automation_ids: [ours.login] });
  await create("/projects/shop/groups", { name: "quiet", automation_ids: [ours.idle] });
  await create("/projects/shop/groups", { name: "none", automation_ids: [] });
  ours.groupRun = await create(`/projects/shop/groups/${smoke}/run`, {}, undefined, 202);
  ours.runner = await create("/runners", { name: "idle-runner" });
  // An automation run once, then deleted: its runs keep its id.
  ours.gone = await create("/projects/shop/automations", { name: "gone", kind: "http", steps });
  ours.goneRun = await create(`/projects/shop/automations/${ours.gone}/run`, {}, undefined, 202);
  expect((await s.call("DELETE", `/projects/shop/automations/${ours.gone}`)).status).toBe(204);

  // Another workspace with a project of the same slug, holding one of everything a filter may name.
  otherKey = (await s.userWithKey("owner@globex.test", "globex", "owner")).key;
  await create("/projects", { name: "Shop", slug: "shop" }, otherKey);
  theirs.feature = await create("/projects/shop/features", { name: "Their feature" }, otherKey);
  theirs.automation = await create("/projects/shop/automations", { name: "their automation", kind: "http", steps, feature: theirs.feature }, otherKey);
  theirs.group = await create("/projects/shop/groups", { name: "their group", automation_ids: [theirs.automation] }, otherKey);
  theirs.groupRun = await create(`/projects/shop/groups/${theirs.group}/run`, {}, otherKey, 202);
  theirs.runner = await create("/runners", { name: "their runner" }, otherKey);

  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "shop" });
});

afterAll(async () => {
  cli.remove();
  await s.stop();
});

const q = encodeURIComponent;
const inShop = (noun: string, ref: string, field: string, hint: string) => `${noun} "${ref}" not found in project shop (filter ${field}: ${hint})`;
const automationGone = (ref: string) => inShop("automation", ref, "automation", "give its exact name, or its id aut_…");
const groupGone = (ref: string) => inShop("group", ref, "group", "give its exact name, or its id grp_…");
const featureGone = (ref: string) => inShop("feature", ref, "feature", "give its exact name, or its id fea_…");
const groupRunGone = (ref: string) => inShop("group run", ref, "group_run", "give its id grn_…");
const runnerGone = (ref: string) => `runner "${ref}" not found among the workspace's runners (filter runner: give its exact name, or its id rnr_…)`;

describe("a filter naming nothing here is a 404 naming the filter", () => {
  const cases: [string, () => string, () => string][] = [
    ["runs by an unknown automation name", () => "/projects/shop/runs?automation=nosuch", () => automationGone("nosuch")],
    ["runs by an unknown automation id", () => "/projects/shop/runs?automation=aut_nosuch", () => automationGone("aut_nosuch")],
    ["runs by a deleted automation's name", () => "/projects/shop/runs?automation=gone", () => automationGone("gone")],
    ["runs by an unknown runner", () => "/projects/shop/runs?runner=nosuch", () => runnerGone("nosuch")],
    ["runs by an unknown group run", () => "/projects/shop/runs?group_run=grn_nosuch", () => groupRunGone("grn_nosuch")],
    ["runs by an existing automation and an unknown runner", () => "/projects/shop/runs?automation=login&runner=nosuch", () => runnerGone("nosuch")],
    ["runs by an unknown automation, whatever the status", () => "/projects/shop/runs?automation=nosuch&status=failed", () => automationGone("nosuch")],
    ["group runs by an unknown group", () => "/projects/shop/group-runs?group=nosuch", () => groupGone("nosuch")],
    ["automations by an unknown feature", () => "/projects/shop/automations?feature=nosuch", () => featureGone("nosuch")],
    ["automations by an unknown group", () => "/projects/shop/automations?group=nosuch", () => groupGone("nosuch")],
    ["automations by an existing feature and an unknown group", () => "/projects/shop/automations?feature=Checkout&group=nosuch", () => groupGone("nosuch")],
    ["a value of no id's shape", () => `/projects/shop/runs?automation=${q("'; DROP TABLE runs;--")}`, () => automationGone("'; DROP TABLE runs;--")],
    // Isolation: another workspace's resources, by id and by name, are not found here.
    ["runs by another workspace's automation id", () => `/projects/shop/runs?automation=${theirs.automation}`, () => automationGone(theirs.automation)],
    ["runs by another workspace's automation name", () => `/projects/shop/runs?automation=${q("their automation")}`, () => automationGone("their automation")],
    ["runs by another workspace's runner id", () => `/projects/shop/runs?runner=${theirs.runner}`, () => runnerGone(theirs.runner)],
    ["runs by another workspace's runner name", () => `/projects/shop/runs?runner=${q("their runner")}`, () => runnerGone("their runner")],
    ["runs by another workspace's group run", () => `/projects/shop/runs?group_run=${theirs.groupRun}`, () => groupRunGone(theirs.groupRun)],
    ["group runs by another workspace's group id", () => `/projects/shop/group-runs?group=${theirs.group}`, () => groupGone(theirs.group)],
    ["group runs by another workspace's group name", () => `/projects/shop/group-runs?group=${q("their group")}`, () => groupGone("their group")],
    ["automations by another workspace's feature id", () => `/projects/shop/automations?feature=${theirs.feature}`, () => featureGone(theirs.feature)],
    ["automations by another workspace's feature name", () => `/projects/shop/automations?feature=${q("Their feature")}`, () => featureGone("Their feature")],
    ["automations by another workspace's group", () => `/projects/shop/automations?group=${theirs.group}`, () => groupGone(theirs.group)],
  ];
  test.each(cases)("%s", async (_, path, message) => {
    const r = await get(path());
    expect({ path: path(), status: r.status, body: r.body }).toEqual({
      path: path(),
      status: 404,
      body: { error: "not_found", message: message(), request_id: expect.any(String) },
    });
  });
});

describe("a filter naming an existing resource with no matching rows is an empty page", () => {
  const cases: [string, () => string][] = [
    ["runs of an automation never run, by name", () => "/projects/shop/runs?automation=idle"],
    ["runs of an automation never run, by id", () => `/projects/shop/runs?automation=${ours.idle}`],
    ["runs of a runner that ran none, by name", () => "/projects/shop/runs?runner=idle-runner"],
    ["runs of a runner that ran none, by id", () => `/projects/shop/runs?runner=${ours.runner}`],
    ["runs of a group run and an automation not in it", () => `/projects/shop/runs?group_run=${ours.groupRun}&automation=idle`],
    ["group runs of a group never run", () => "/projects/shop/group-runs?group=quiet"],
    ["automations of a feature without any", () => `/projects/shop/automations?feature=${q("Empty feature")}`],
    ["automations of a group without any", () => "/projects/shop/automations?group=none"],
    ["automations of a feature and a group sharing none", () => "/projects/shop/automations?feature=Checkout&group=quiet"],
    ["a status filter is no resource: an empty page", () => "/projects/shop/runs?status=cancelled&automation=idle"],
  ];
  test.each(cases)("%s", async (_, path) => {
    expect({ path: path(), ...(await get(path())) }).toEqual({ path: path(), status: 200, body: { data: [], next_cursor: null } });
  });

  test("and one naming an existing resource with rows lists them", async () => {
    const runs = await get("/projects/shop/runs?automation=login");
    expect(runs.status).toBe(200);
    expect((runs.body.data as { automation_id: string }[]).map((r) => r.automation_id)).toEqual([ours.login]);
    const groupRuns = await get(`/projects/shop/runs?group_run=${ours.groupRun}`);
    expect((groupRuns.body.data as { group_run_id: string }[]).map((r) => r.group_run_id)).toEqual([ours.groupRun]);
  });

  test("a deleted automation's id still lists the runs that keep it", async () => {
    const r = await get(`/projects/shop/runs?automation=${ours.gone}`);
    expect(r.status).toBe(200);
    expect((r.body.data as { id: string }[]).map((x) => x.id)).toEqual([ours.goneRun]);
  });
});

test("CLI: runs list --automation naming nothing exits 4 with the message; an automation never run lists nothing, exit 0", async () => {
  const none = await cli.run(["runs", "list", "--automation", "nosuch"]);
  expect({ code: none.code, stdout: none.stdout }).toEqual({ code: 4, stdout: "" });
  expect(none.stderr).toContain(automationGone("nosuch"));
  const idle = await cli.run(["runs", "list", "--automation", "idle", "--json"]);
  expect({ code: idle.code, stderr: idle.stderr }).toEqual({ code: 0, stderr: "" });
  expect(JSON.parse(idle.stdout)).toEqual({ data: [], next_cursor: null });
  const groupRuns = await cli.run(["group-runs", "list", "--group", "nosuch"]);
  expect(groupRuns.code).toBe(4);
  expect(groupRuns.stderr).toContain(groupGone("nosuch"));
});
