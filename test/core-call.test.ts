// An operation called in-process (core/call.ts) answers exactly as over HTTP: the same status, error code,
// message and details paths for the same input, and the same record for a valid one.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { callOperation, type RawInput } from "../src/core/call";
import type { Principal } from "../src/core/context";
import type { OperationKey } from "../src/core/registry";
import { AppError, ops } from "../src/manifest";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let key: string;
let principal: Principal;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const u = await s.userWithKey("same@acme.test", "acme", "member");
  key = u.key;
  const me = await (await s.call("GET", "/me", undefined, key)).json();
  principal = { userId: u.userId, workspaceId: me.workspace.id, role: "member", via: "key", keyId: u.keyId, trigger: "api" };
  expect((await s.call("POST", "/projects", { name: "Shop", slug: "shop" })).status).toBe(201);
});
afterAll(() => s.stop());

const cases: { name: string; op: OperationKey; http: [string, string, unknown?]; input: RawInput }[] = [
  { name: "a missing field", op: "createProject", http: ["POST", "/projects", {}], input: { body: {} } },
  { name: "an unknown field", op: "createProject", http: ["POST", "/projects", { name: "X", colour: "red" }], input: { body: { name: "X", colour: "red" } } },
  { name: "a bad query field", op: "listProjects", http: ["GET", "/projects?limit=0"], input: { query: { limit: "0" } } },
  {
    name: "a nested bad field",
    op: "createEnvironment",
    http: ["POST", "/projects/shop/environments", { name: "qa", variables: { "1X": "v" } }],
    input: { params: { project: "shop" }, body: { name: "qa", variables: { "1X": "v" } } },
  },
  { name: "an unknown project", op: "getProject", http: ["GET", "/projects/nowhere"], input: { params: { project: "nowhere" } } },
  { name: "a member deleting a project", op: "deleteProject", http: ["DELETE", "/projects/shop"], input: { params: { project: "shop" } } },
  { name: "a key calling a session-only operation", op: "createKey", http: ["POST", "/keys", { name: "k" }], input: { body: { name: "k" } } },
];

for (const c of cases) {
  test(`${c.name}: the same answer in-process as over HTTP`, async () => {
    const [method, path, body] = c.http;
    const res = await s.call(method, path, body, key);
    const { request_id: _id, ...overHttp } = await res.json();
    let inProcess: { status: number; body: unknown };
    try {
      inProcess = { status: ops[c.op].successStatus, body: await callOperation(s.server.core, principal, c.op, c.input) };
    } catch (e) {
      if (!(e instanceof AppError)) throw e;
      inProcess = { status: e.status, body: e.toBody() };
    }
    expect(inProcess).toEqual({ status: res.status, body: overHttp });
  });
}

test("a valid call answers the record the HTTP edge answers", async () => {
  const viaHttp = await (await s.call("GET", "/projects/shop", undefined, key)).json();
  expect(await callOperation(s.server.core, principal, "getProject", { params: { project: "shop" } })).toEqual(viaHttp);
});
