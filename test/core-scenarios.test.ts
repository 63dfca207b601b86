// The fast tier: scenario tables run in-process through core/call.ts (validated exactly as over HTTP), each on a
// fresh copy of one fixture database, without a server. Each row names the operation, the role acting, the input,
// the status and error code expected, and text the answer must and must not contain.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, rmSync } from "node:fs";
import { loadConfig } from "../config/load";
import { createUserInWorkspace } from "../src/core/access/users";
import { callOperation, type RawInput } from "../src/core/call";
import type { Principal, Role } from "../src/core/context";
import { openCore, type OpenedCore } from "../src/core";
import type { OperationKey } from "../src/core/registry";
import { AppError, ERROR_TABLE, type ErrorCode, ops } from "../src/manifest";
import { copyTestDatabase, tempDir, testDatabaseUrl } from "./helpers/server";

type Actor = Role | "outsider";

/** What the fixture holds: ids the rows refer to. */
interface Fixture {
  users: Record<Actor, string>;
  project: string;
  feature: string;
  automation: string;
  disabledAutomation: string;
  environment: string;
  protectedEnvironment: string;
  group: string;
  emptyGroup: string;
  otherProject: string;
}

interface Scenario {
  name: string;
  op: OperationKey;
  as: Actor;
  input?: RawInput | ((f: Fixture) => RawInput);
  status: number;
  code?: ErrorCode;
  /** Every `details` path of the 400, in order. */
  details?: string[];
  expected?: (string | ((f: Fixture) => string))[];
  notExpected?: (string | ((f: Fixture) => string))[];
}

let fixtureDir: string;
let fixture: Fixture;
let workspaces: { acme: string; initech: string };
const dirs: string[] = [];

const configFor = async (dataDir: string) => {
  const url = await testDatabaseUrl(dataDir);
  return loadConfig({ env: {}, flags: { data_dir: dataDir, log_level: "warn", ...(url ? { "database.url": url } : {}) } });
};
const principal = (f: Fixture, as: Actor): Principal => ({
  userId: f.users[as],
  workspaceId: as === "outsider" ? workspaces.initech : workspaces.acme,
  role: as === "outsider" ? "owner" : as,
  via: "key",
  keyId: null,
  trigger: "api",
});

beforeAll(async () => {
  fixtureDir = tempDir("svc-core-fixture-");
  const core = await openCore(await configFor(fixtureDir));
  try {
    const make = (email: string, workspace: string, role: Role) =>
      createUserInWorkspace(core.db, { email, name: email.split("@")[0] ?? email, workspace, role });
    const owner = await make("owner@acme.test", "acme", "owner");
    const admin = await make("admin@acme.test", "acme", "admin");
    const member = await make("member@acme.test", "acme", "member");
    const outsider = await make("owner@initech.test", "initech", "owner");
    workspaces = { acme: owner.workspaceId, initech: outsider.workspaceId };
    const users = { owner: owner.userId, admin: admin.userId, member: member.userId, outsider: outsider.userId };
    const as = (actor: Actor): Principal => principal({ users } as Fixture, actor);
    const project = await callOperation(core, as("owner"), "createProject", { body: { name: "Shop", slug: "shop" } });
    const other = await callOperation(core, as("outsider"), "createProject", { body: { name: "Secret", slug: "secret" } });
    const p = { project: project.slug };
    const feature = await callOperation(core, as("owner"), "createFeature", { params: p, body: { name: "Checkout" } });
    const steps = [{ request: { url: "http://127.0.0.1:9/health" } }];
    const automation = await callOperation(core, as("owner"), "createAutomation", { params: p, body: { name: "health", kind: "http", steps } });
    const disabled = await callOperation(core, as("owner"), "createAutomation", { params: p, body: { name: "old", kind: "http", steps, status: "disabled" } });
    const env = await callOperation(core, as("owner"), "createEnvironment", {
      params: p,
      body: { name: "staging", variables: { BASE_URL: "http://127.0.0.1:9" } },
    });
    const prod = await callOperation(core, as("owner"), "createEnvironment", {
      params: p,
      body: { name: "prod", protected: true, secrets: { TOKEN: "s3cret-value" } },
    });
    const group = await callOperation(core, as("owner"), "createGroup", { params: p, body: { name: "smoke", automation_ids: [automation.id] } });
    const empty = await callOperation(core, as("owner"), "createGroup", { params: p, body: { name: "empty" } });
    fixture = {
      users,
      project: project.id,
      feature: feature.id,
      automation: automation.id,
      disabledAutomation: disabled.id,
      environment: env.id,
      protectedEnvironment: prod.id,
      group: group.id,
      emptyGroup: empty.id,
      otherProject: other.id,
    };
  } finally {
    await core.close();
  }
});

afterAll(() => {
  for (const d of [fixtureDir, ...dirs]) rmSync(d, { recursive: true, force: true });
});

/** Runs one scenario on a fresh copy of the fixture database. */
async function play(s: Scenario): Promise<void> {
  const dir = tempDir("svc-core-scenario-");
  dirs.push(dir);
  cpSync(fixtureDir, dir, { recursive: true });
  await copyTestDatabase(fixtureDir, dir);
  const core: OpenedCore = await openCore(await configFor(dir));
  try {
    const input = typeof s.input === "function" ? s.input(fixture) : (s.input ?? {});
    let status: number;
    let code: string | undefined;
    let details: string[] | undefined;
    let text: string;
    try {
      const out = await callOperation(core, principal(fixture, s.as), s.op, input);
      status = ops[s.op].successStatus;
      text = JSON.stringify(out ?? null);
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      status = e.status;
      code = e.code;
      details = e.details?.map((d) => d.path);
      text = JSON.stringify(e.toBody());
    }
    expect({ scenario: s.name, status, code }).toEqual({ scenario: s.name, status: s.status, code: s.code });
    if (s.code) expect(ERROR_TABLE[s.code].status as number).toBe(s.status);
    if (s.details) expect({ scenario: s.name, details }).toEqual({ scenario: s.name, details: s.details });
    const resolve = (t: string | ((f: Fixture) => string)) => (typeof t === "function" ? t(fixture) : t);
    for (const t of s.expected ?? []) expect({ scenario: s.name, contains: resolve(t), in: text.includes(resolve(t)) }).toMatchObject({ in: true });
    for (const t of s.notExpected ?? []) expect({ scenario: s.name, lacks: resolve(t), in: text.includes(resolve(t)) }).toMatchObject({ in: false });
  } finally {
    await core.close();
  }
}

const shop = { project: "shop" };

const tables: Record<string, Scenario[]> = {
  projects: [
    {
      name: "a member lists the workspace's projects, not another workspace's",
      op: "listProjects",
      as: "member",
      status: 200,
      expected: ['"slug":"shop"'],
      notExpected: ['"slug":"secret"'],
    },
    { name: "a project is found by slug", op: "getProject", as: "member", input: { params: shop }, status: 200, expected: [(f) => f.project] },
    {
      name: "a project is found by id",
      op: "getProject",
      as: "member",
      input: (f) => ({ params: { project: f.project } }),
      status: 200,
      expected: ['"slug":"shop"'],
    },
    {
      name: "another workspace's project is not found",
      op: "getProject",
      as: "member",
      input: { params: { project: "secret" } },
      status: 404,
      code: "not_found",
      notExpected: ["Secret"],
    },
    {
      name: "a project is created with a derived slug",
      op: "createProject",
      as: "member",
      input: { body: { name: "New Store" } },
      status: 201,
      expected: ['"slug":"new-store"'],
    },
    {
      name: "a project without a name is refused, naming the field",
      op: "createProject",
      as: "owner",
      input: { body: {} },
      status: 400,
      code: "invalid_request",
      details: ["body.name"],
    },
    {
      name: "an unknown body field is refused, naming it",
      op: "createProject",
      as: "owner",
      input: { body: { name: "X", colour: "red" } },
      status: 400,
      code: "invalid_request",
      details: ["body"],
      expected: ["colour"],
    },
    {
      name: "a taken slug is a conflict",
      op: "createProject",
      as: "owner",
      input: { body: { name: "Shop again", slug: "shop" } },
      status: 409,
      code: "conflict",
      expected: ["already exists"],
    },
    {
      name: "a bad page size is refused, naming the query field",
      op: "listProjects",
      as: "owner",
      input: { query: { limit: "0" } },
      status: 400,
      code: "invalid_request",
      details: ["query.limit"],
    },
    { name: "a member cannot delete a project", op: "deleteProject", as: "member", input: { params: shop }, status: 403, code: "forbidden" },
    { name: "an admin deletes a project", op: "deleteProject", as: "admin", input: { params: shop }, status: 204 },
  ],
  features: [
    {
      name: "a feature is created in a project",
      op: "createFeature",
      as: "member",
      input: { params: shop, body: { name: "Search", acceptance_criteria: "finds things" } },
      status: 201,
      expected: ['"name":"Search"', (f) => f.project],
    },
    {
      name: "a feature without a name is refused",
      op: "createFeature",
      as: "member",
      input: { params: shop, body: { description: "no name" } },
      status: 400,
      code: "invalid_request",
      details: ["body.name"],
    },
    {
      name: "a feature is found by exact name",
      op: "getFeature",
      as: "member",
      input: { params: { ...shop, feature: "Checkout" } },
      status: 200,
      expected: [(f) => f.feature],
    },
    {
      name: "a feature of another workspace's project is not found",
      op: "listFeatures",
      as: "member",
      input: { params: { project: "secret" } },
      status: 404,
      code: "not_found",
    },
    {
      name: "a feature without runnable automations cannot run",
      op: "runFeature",
      as: "member",
      input: (f) => ({ params: { ...shop, feature: f.feature }, body: {} }),
      status: 409,
      code: "conflict",
    },
    {
      name: "an unknown feature is not found",
      op: "deleteFeature",
      as: "owner",
      input: { params: { ...shop, feature: "fea_nothing" } },
      status: 404,
      code: "not_found",
    },
  ],
  automations: [
    {
      name: "an automation is created",
      op: "createAutomation",
      as: "member",
      input: { params: shop, body: { name: "home", kind: "http", steps: [{ request: { url: "https://example.com/" } }] } },
      status: 201,
      expected: ['"status":"active"', '"name":"home"'],
    },
    {
      name: "an automation without steps is refused, naming the field",
      op: "createAutomation",
      as: "member",
      input: { params: shop, body: { name: "empty", kind: "http" } },
      status: 400,
      code: "invalid_request",
      details: ["body.steps"],
    },
    {
      name: "an unknown kind is refused, naming the field",
      op: "createAutomation",
      as: "member",
      input: { params: shop, body: { name: "x", kind: "ftp", steps: [] } },
      status: 400,
      code: "invalid_request",
      expected: ["body.kind"],
    },
    {
      name: "an automation is run and a run is queued",
      op: "runAutomation",
      as: "member",
      input: (f) => ({ params: { ...shop, automationId: f.automation }, body: {} }),
      status: 202,
      expected: ['"status":"queued"', (f) => f.automation],
    },
    {
      name: "a disabled automation cannot run",
      op: "runAutomation",
      as: "member",
      input: (f) => ({ params: { ...shop, automationId: f.disabledAutomation }, body: {} }),
      status: 409,
      code: "conflict",
      expected: ["disabled"],
    },
    {
      name: "an active automation cannot go back to draft",
      op: "updateAutomation",
      as: "member",
      input: (f) => ({ params: { ...shop, automationId: f.automation }, body: { status: "draft" } }),
      status: 409,
      code: "conflict",
    },
    {
      name: "a run in a protected environment is for owners and admins",
      op: "runAutomation",
      as: "member",
      input: (f) => ({ params: { ...shop, automationId: f.automation }, body: { environment: "prod" } }),
      status: 403,
      code: "forbidden",
      notExpected: ["s3cret-value"],
    },
    {
      name: "another workspace's automation is not found",
      op: "getAutomation",
      as: "outsider",
      input: (f) => ({ params: { project: "secret", automationId: f.automation } }),
      status: 404,
      code: "not_found",
      notExpected: ["health"],
    },
  ],
  environments: [
    {
      name: "environments list their secret names, never the values",
      op: "listEnvironments",
      as: "member",
      input: { params: shop },
      status: 200,
      expected: ['"secret_names":["TOKEN"]', '"name":"staging"'],
      notExpected: ["s3cret-value"],
    },
    {
      name: "an environment is found by name",
      op: "getEnvironment",
      as: "member",
      input: { params: { ...shop, environmentId: "staging" } },
      status: 200,
      expected: [(f) => f.environment, "BASE_URL"],
    },
    {
      name: "a bad variable name is refused, naming it",
      op: "createEnvironment",
      as: "member",
      input: { params: shop, body: { name: "qa", variables: { "1X": "v" } } },
      status: 400,
      code: "invalid_request",
      details: ["body.variables.1X"],
    },
    {
      name: "a short secret is refused, naming it",
      op: "createEnvironment",
      as: "member",
      input: { params: shop, body: { name: "qa", secrets: { T: "short" } } },
      status: 400,
      code: "invalid_request",
      details: ["body.secrets.T"],
    },
    {
      name: "a taken name is a conflict",
      op: "createEnvironment",
      as: "member",
      input: { params: shop, body: { name: "staging" } },
      status: 409,
      code: "conflict",
    },
    {
      name: "a member cannot change a protected environment",
      op: "updateEnvironment",
      as: "member",
      input: { params: { ...shop, environmentId: "prod" }, body: { variables: { A: "b" } } },
      status: 403,
      code: "forbidden",
    },
    {
      name: "an admin changes a protected environment",
      op: "updateEnvironment",
      as: "admin",
      input: { params: { ...shop, environmentId: "prod" }, body: { variables: { A: "b" } } },
      status: 200,
      expected: ['"A":"b"'],
      notExpected: ["s3cret-value"],
    },
    {
      name: "an unknown environment is not found",
      op: "deleteEnvironment",
      as: "owner",
      input: { params: { ...shop, environmentId: "nowhere" } },
      status: 404,
      code: "not_found",
    },
  ],
  groups: [
    {
      name: "a group is created with its automations",
      op: "createGroup",
      as: "member",
      input: (f) => ({ params: shop, body: { name: "nightly", automation_ids: [f.automation] } }),
      status: 201,
      expected: [(f) => f.automation, '"name":"nightly"'],
    },
    {
      name: "a group's automations may be named by exact name; it keeps their ids",
      op: "createGroup",
      as: "member",
      input: { params: shop, body: { name: "by-name", automation_ids: ["health", "old"] } },
      status: 201,
      expected: [(f) => `"automation_ids":["${f.automation}","${f.disabledAutomation}"]`],
    },
    {
      name: "an automation named twice in a group, once by id and once by name, is refused as a duplicate",
      op: "createGroup",
      as: "member",
      input: (f) => ({ params: shop, body: { name: "twice", automation_ids: [f.automation, "health"] } }),
      status: 400,
      code: "invalid_request",
      details: ["automation_ids.1"],
    },
    {
      name: "a group naming an unknown automation is refused, naming the item",
      op: "createGroup",
      as: "member",
      input: (f) => ({ params: shop, body: { name: "unknown", automation_ids: [f.automation, "nosuch"] } }),
      status: 400,
      code: "invalid_request",
      details: ["automation_ids.1"],
    },
    {
      name: "a group with a bad automation list is refused, naming the item",
      op: "createGroup",
      as: "member",
      input: { params: shop, body: { name: "bad", automation_ids: [""] } },
      status: 400,
      code: "invalid_request",
      details: ["body.automation_ids.0"],
    },
    {
      name: "a group is found by exact name",
      op: "getGroup",
      as: "member",
      input: { params: { ...shop, groupId: "smoke" } },
      status: 200,
      expected: [(f) => f.group],
    },
    {
      name: "a group is run",
      op: "runGroup",
      as: "member",
      input: { params: { ...shop, groupId: "smoke" }, body: {} },
      status: 202,
      expected: [(f) => f.group],
    },
    {
      name: "an empty group cannot run",
      op: "runGroup",
      as: "member",
      input: { params: { ...shop, groupId: "empty" }, body: {} },
      status: 409,
      code: "conflict",
    },
    {
      name: "another workspace's group is not found",
      op: "getGroup",
      as: "outsider",
      input: (f) => ({ params: { project: "secret", groupId: f.group } }),
      status: 404,
      code: "not_found",
      notExpected: ["smoke"],
    },
  ],
  members: [
    {
      name: "members are listed with their roles",
      op: "listMembers",
      as: "member",
      status: 200,
      expected: ["admin@acme.test", '"role":"owner"'],
      notExpected: ["initech"],
    },
    {
      name: "an admin adds a new person, who gets a setup link",
      op: "addMember",
      as: "admin",
      input: { body: { email: "new@acme.test" } },
      status: 201,
      expected: ['"status":"member"', "/setup-password?token="],
    },
    {
      name: "a bad address is refused, naming the field",
      op: "addMember",
      as: "admin",
      input: { body: { email: "nobody" } },
      status: 400,
      code: "invalid_request",
      details: ["body.email"],
    },
    { name: "a member cannot add members", op: "addMember", as: "member", input: { body: { email: "new@acme.test" } }, status: 403, code: "forbidden" },
    {
      name: "an admin cannot add an owner",
      op: "addMember",
      as: "admin",
      input: { body: { email: "boss@acme.test", role: "owner" } },
      status: 403,
      code: "forbidden",
    },
    {
      name: "adding a member again is a conflict",
      op: "addMember",
      as: "owner",
      input: { body: { email: "member@acme.test" } },
      status: 409,
      code: "conflict",
    },
    {
      name: "the last owner stays an owner",
      op: "updateMember",
      as: "owner",
      input: (f) => ({ params: { userId: f.users.owner }, body: { role: "member" } }),
      status: 409,
      code: "conflict",
    },
    {
      name: "an admin cannot remove an owner",
      op: "removeMember",
      as: "admin",
      input: (f) => ({ params: { userId: f.users.owner } }),
      status: 403,
      code: "forbidden",
    },
    {
      name: "another workspace's person is not a member here",
      op: "removeMember",
      as: "owner",
      input: (f) => ({ params: { userId: f.users.outsider } }),
      status: 404,
      code: "not_found",
    },
    { name: "an owner removes a member", op: "removeMember", as: "owner", input: (f) => ({ params: { userId: f.users.member } }), status: 204 },
    { name: "an API key cannot mint keys (session-only)", op: "createKey", as: "owner", input: { body: { name: "k" } }, status: 403, code: "forbidden" },
  ],
};

for (const [resource, scenarios] of Object.entries(tables)) {
  describe(resource, () => {
    for (const s of scenarios) test(s.name, () => play(s));
  });
}
