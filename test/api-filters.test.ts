// List filters over real HTTP: list_automations by group and status (alone and together) and list_group_runs
// by group each return exactly the matching records; a group id that names nothing here — unknown, another
// project's, or of the wrong shape — is a 404 naming the filter, never a 400 (PRODUCT.md: never 400 for an id).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const a = { active: "", draft: "", disabled: "", other: "", outside: "" };
const g = { mixed: "", rest: "", empty: "", elsewhere: "" };
const groupRuns: Record<string, string[]> = {};

async function create(path: string, body: unknown): Promise<string> {
  const res = await s.call("POST", path, body);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

async function list(path: string): Promise<string[]> {
  const res = await s.call("GET", path);
  const text = await res.text();
  expect({ path, status: res.status }).toEqual({ path, status: 200 });
  const page = JSON.parse(text);
  expect(page.next_cursor).toBeNull();
  return page.data.map((x: { id: string }) => x.id).sort();
}

const sorted = (...xs: string[]) => [...xs].sort();

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  await create("/projects", { name: "Shop", slug: "shop" });
  await create("/projects", { name: "Other", slug: "other" });
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  const aut = (name: string, status: string, project = "shop") => create(`/projects/${project}/automations`, { name, kind: "http", steps, status });
  a.active = await aut("active one", "active");
  a.draft = await aut("draft one", "draft");
  a.disabled = await aut("disabled one", "disabled");
  a.other = await aut("another active", "active");
  a.outside = await aut("in the other project", "active", "other");
  g.mixed = await create("/projects/shop/groups", { name: "mixed", automation_ids: [a.active, a.draft, a.disabled] });
  g.rest = await create("/projects/shop/groups", { name: "rest", automation_ids: [a.other] });
  g.empty = await create("/projects/shop/groups", { name: "empty", automation_ids: [] });
  g.elsewhere = await create("/projects/other/groups", { name: "elsewhere", automation_ids: [a.outside] });
  for (const [group, times] of [
    [g.mixed, 2],
    [g.rest, 1],
  ] as const) {
    groupRuns[group] = [];
    for (let i = 0; i < times; i++) {
      const res = await s.call("POST", `/projects/shop/groups/${group}/run`, {});
      if (res.status !== 202) throw new Error(`run_group: ${res.status} ${await res.text()}`);
      groupRuns[group]?.push((await res.json()).id);
    }
  }
  groupRuns[g.elsewhere] = [(await (await s.call("POST", `/projects/other/groups/${g.elsewhere}/run`, {})).json()).id];
});
afterAll(() => s.stop());

/** The answer to a group filter naming no group of the project: a 404 naming the filter. */
async function expectNoGroup(path: string, ref: string): Promise<void> {
  const res = await s.call("GET", path);
  expect({ path, status: res.status, body: await res.json() }).toEqual({
    path,
    status: 404,
    body: {
      error: "not_found",
      message: `group "${ref}" not found in project shop (filter group: give its exact name, or its id grp_…)`,
      request_id: expect.any(String),
    },
  });
}

const WRONG_SHAPES = ["x", "grp_", "grp_doesNotExist0000", "'; DROP TABLE groups;--", "%25", "..%2F..", "ÿ", `grp_${"x".repeat(300)}`, "y".repeat(5000)];

describe("list_automations", () => {
  test("without filters lists the project's automations only", async () => {
    expect(await list("/projects/shop/automations")).toEqual(sorted(a.active, a.draft, a.disabled, a.other));
  });

  test("group narrows to that group's automations", async () => {
    expect(await list(`/projects/shop/automations?group=${g.mixed}`)).toEqual(sorted(a.active, a.draft, a.disabled));
    expect(await list(`/projects/shop/automations?group=${g.rest}`)).toEqual([a.other]);
    expect(await list(`/projects/shop/automations?group=${g.empty}`)).toEqual([]);
  });

  test("status narrows to automations in that status", async () => {
    expect(await list("/projects/shop/automations?status=active")).toEqual(sorted(a.active, a.other));
    expect(await list("/projects/shop/automations?status=draft")).toEqual([a.draft]);
    expect(await list("/projects/shop/automations?status=disabled")).toEqual([a.disabled]);
  });

  test("group and status together are both applied", async () => {
    expect(await list(`/projects/shop/automations?group=${g.mixed}&status=active`)).toEqual([a.active]);
    expect(await list(`/projects/shop/automations?group=${g.mixed}&status=disabled`)).toEqual([a.disabled]);
    expect(await list(`/projects/shop/automations?group=${g.rest}&status=draft`)).toEqual([]);
  });

  test("a group filter that names no group of this project is a 404 naming the filter, never a 400", async () => {
    await expectNoGroup(`/projects/shop/automations?group=${g.elsewhere}`, g.elsewhere);
    for (const id of WRONG_SHAPES) await expectNoGroup(`/projects/shop/automations?group=${encodeURIComponent(id)}`, id);
  });

  test("a status that is not a status is a 400 naming the parameter", async () => {
    const res = await s.call("GET", "/projects/shop/automations?status=sleeping");
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toBe("invalid_request");
    expect(JSON.stringify(body.details)).toContain("status");
  });
});

describe("list_group_runs", () => {
  test("without a filter lists every group run of the project", async () => {
    expect(await list("/projects/shop/group-runs")).toEqual(sorted(...(groupRuns[g.rest] ?? []), ...(groupRuns[g.mixed] ?? [])));
  });

  test("group narrows to that group's runs", async () => {
    expect(await list(`/projects/shop/group-runs?group=${g.mixed}`)).toEqual(sorted(...(groupRuns[g.mixed] ?? [])));
    expect(await list(`/projects/shop/group-runs?group=${g.rest}`)).toEqual(sorted(...(groupRuns[g.rest] ?? [])));
    expect(await list(`/projects/shop/group-runs?group=${g.empty}`)).toEqual([]);
    const res = await (await s.call("GET", `/projects/shop/group-runs?group=${g.mixed}`)).json();
    expect(res.data.every((r: { group_id: string }) => r.group_id === g.mixed)).toBe(true);
  });

  test("a group filter that names no group of this project is a 404 naming the filter, never a 400", async () => {
    await expectNoGroup(`/projects/shop/group-runs?group=${g.elsewhere}`, g.elsewhere);
    expect(await list(`/projects/other/group-runs?group=${g.elsewhere}`)).toEqual(groupRuns[g.elsewhere] ?? ["missing"]);
    for (const id of WRONG_SHAPES) await expectNoGroup(`/projects/shop/group-runs?group=${encodeURIComponent(id)}`, id);
  });
});
