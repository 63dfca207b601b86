// create_key is an operation of the manifest like any other, marked session-only: only a person signed in to
// the web application mints keys, a key never does. It is in the OpenAPI document, but no CLI command or MCP tool.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Command } from "commander";
import { registerCli } from "../cli/index";
import { ops } from "../src/manifest";
import { WebClient } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const email = "kay@acme.test";

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  await s.userWithKey(email, "acme", "member");
});
afterAll(() => s.stop());

test("the OpenAPI document has create_key at POST /api/v1/ops/keys, secured by the web session only", async () => {
  const doc = await (await fetch(`${s.url}/api/v1/openapi.json`)).json();
  const entry = doc.paths["/api/v1/ops/keys"].post;
  expect(entry.operationId).toBe("create_key");
  expect(entry.security).toEqual([{ webSession: [] }]);
  expect(entry["x-svc-cli"]).toBeUndefined();
  expect(Object.keys(entry.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403"]));
  expect(doc.components.securitySchemes.webSession).toMatchObject({ type: "apiKey", in: "cookie", name: "svc_session" });
  expect(doc.paths["/api/v1/ops/keys"].get.security).toEqual([{ bearerAuth: [] }]);
});

test("create_key is session-only in the manifest, so the CLI has no command for it", () => {
  expect(ops.createKey.sessionOnly).toBe(true);
  const program = new Command("svc");
  registerCli(program);
  const keys = program.commands.find((c) => c.name() === "keys");
  expect(keys?.commands.map((c) => c.name()).sort()).toEqual(["get", "list", "revoke"]);
});

test("a signed-in person creates a key through the operation; the key works with the API", async () => {
  const c = new WebClient(s.url);
  expect((await c.signIn(email, "correct horse battery")).status).toBe(200);
  const created = await c.send("POST", "/api/v1/ops/keys", { name: "laptop", expires_at: new Date(Date.now() + 86_400_000).toISOString() });
  expect(created.status).toBe(201);
  const k = await created.json();
  expect(k).toMatchObject({ name: "laptop", prefix: k.key.slice(0, 12) });
  expect(k.key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
  const me = await s.call("GET", "/me", undefined, k.key);
  expect(me.status).toBe(200);
  expect((await me.json()).user.email).toBe(email);
});

test("create_key refuses a key (403), no credentials (401), a missing CSRF token (403) and bad input (400), creating nothing", async () => {
  const withKey = await s.call("POST", "/keys", { name: "minted" });
  expect(withKey.status).toBe(403);
  expect(await withKey.json()).toMatchObject({ error: "forbidden" });
  const anonymous = await s.call("POST", "/keys", { name: "minted" }, null);
  expect(anonymous.status).toBe(401);
  const c = new WebClient(s.url);
  await c.signIn(email, "correct horse battery");
  const noCsrf = await fetch(`${s.api}/keys`, {
    method: "POST",
    headers: { cookie: c.cookie, "content-type": "application/json" },
    body: JSON.stringify({ name: "minted" }),
  });
  expect(noCsrf.status).toBe(403);
  const past = await c.send("POST", "/api/v1/ops/keys", { name: "minted", expires_at: "2000-01-01T00:00:00Z" });
  expect(past.status).toBe(400);
  expect(await past.json()).toMatchObject({ error: "invalid_request", details: [{ path: "body.expires_at" }] });
  const noName = await c.send("POST", "/api/v1/ops/keys", { name: "" });
  expect(noName.status).toBe(400);
  expect((await noName.json()).details[0].path).toBe("body.name");
  const listed = await (await c.send("GET", "/api/v1/ops/keys?limit=200")).json();
  expect(listed.data.map((k: { name: string }) => k.name)).not.toContain("minted");
});
