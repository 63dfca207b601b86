// An Idempotency-Key belongs to the operation and the resource it resolves to, not to the URL's spelling: the
// same key sent by project id, by slug and with a trailing slash starts one run (one group run, one generation),
// also when the requests arrive at once; the same key on another resource is new work.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const ids = { project: "", automation: "", other: "", group: "", feature: "" };

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const create = async (path: string, body: unknown) => {
    const res = await s.call("POST", path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  ids.project = await create("/projects", { name: "Shop", slug: "shop" });
  const steps = [{ request: { url: "http://127.0.0.1:9/" } }];
  ids.automation = await create("/projects/shop/automations", { name: "one", kind: "http", steps });
  ids.other = await create("/projects/shop/automations", { name: "two", kind: "http", steps });
  ids.group = await create("/projects/shop/groups", { name: "both", automation_ids: [ids.automation] });
  ids.feature = await create("/projects/shop/features", {
    name: "Login",
    acceptance_criteria: 'Scenario: opens\n  Given I open "/login"',
    target: { kind: "web", url: "http://127.0.0.1:9/login" },
  });
});
afterAll(() => s.stop());

/** The ways a client may spell the same route: by project id, by slug, and either with a trailing slash. */
const spellings = (rest: string) => [`/projects/${ids.project}${rest}`, `/projects/shop${rest}`, `/projects/shop${rest}/`, `/projects/${ids.project}${rest}/`];

async function start(path: string, key: string) {
  const res = await s.call("POST", path, {}, undefined, { "idempotency-key": key });
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as { id: string } };
}

async function listed(path: string): Promise<string[]> {
  const res = await s.call("GET", path);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { id: string }[] }).data.map((r) => r.id);
}

test("run_automation: one key by id, by slug and with a trailing slash starts one run", async () => {
  const answers = [];
  for (const path of spellings(`/automations/${ids.automation}/run`)) answers.push(await start(path, "deploy-42"));
  expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
  expect(answers.map((a) => a.replayed)).toEqual([null, "true", "true", "true"]);
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  expect(await listed(`/projects/shop/automations/${ids.automation}/runs`)).toEqual([String(answers[0]?.body.id)]);

  // The same key on another automation is another start.
  const other = await start(`/projects/shop/automations/${ids.other}/run`, "deploy-42");
  expect({ status: other.status, replayed: other.replayed }).toEqual({ status: 202, replayed: null });
  expect(other.body.id).not.toBe(answers[0]?.body.id);
});

test("run_automation: the same key by id and by slug at the same moment starts one run", async () => {
  const before = await listed(`/projects/shop/automations/${ids.other}/runs`);
  const answers = await Promise.all(spellings(`/automations/${ids.other}/run`).map((path) => start(path, "at-once")));
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  expect((await listed(`/projects/shop/automations/${ids.other}/runs`)).length).toBe(before.length + 1);
});

test("run_group: one key by id, by slug and with a trailing slash starts one group run", async () => {
  const answers = [];
  for (const path of spellings(`/groups/${ids.group}/run`)) answers.push(await start(path, "nightly"));
  expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  expect(await listed(`/projects/shop/group-runs?group=${ids.group}`)).toEqual([String(answers[0]?.body.id)]);
});

test("start_generation: one key by id, by slug and with a trailing slash starts one generation", async () => {
  const answers = [];
  for (const path of spellings(`/features/${ids.feature}/generation`)) answers.push(await start(path, "gen-1"));
  // A second generation while the first is in progress would be a 409: every answer is the first one, replayed.
  expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
  expect(answers.map((a) => a.replayed)).toEqual([null, "true", "true", "true"]);
  expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
});

test("a key on a project that does not exist is the operation's 404", async () => {
  const missing = await start(`/projects/nope/automations/${ids.automation}/run`, "deploy-404");
  expect({ status: missing.status, error: (missing.body as unknown as { error: string }).error }).toEqual({ status: 404, error: "not_found" });
});
