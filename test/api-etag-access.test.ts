// No lost updates on the workspace's people and keys: one member, one key and one pending invitation are read with an
// ETag; changing or removing them honours If-Match (stale → 412 precondition_failed, nothing changed). On REST,
// the CLI (--if-match) and MCP (if_match).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key });
});

afterAll(async () => {
  cli.remove();
  await s.stop();
});

const etag = (res: Response) => res.headers.get("etag") ?? "";

test("a member is read with an ETag; a role change or removal from a stale one is 412 and changes nothing", async () => {
  const bob = await s.userWithKey("bob@acme.test", "acme", "member");
  const read = await s.call("GET", `/members/${bob.userId}`);
  expect(read.status).toBe(200);
  expect(((await read.json()) as { email: string }).email).toBe("bob@acme.test");
  const tag0 = etag(read);
  expect(tag0).toMatch(/^"[A-Za-z0-9_-]+"$/);
  const changed = await s.call("PATCH", `/members/${bob.userId}`, { role: "admin" }, undefined, { "if-match": tag0 });
  expect(changed.status).toBe(200);
  const tag1 = etag(changed);
  expect(tag1).not.toBe(tag0);
  expect(etag(await s.call("GET", `/members/${bob.userId}`))).toBe(tag1);
  const stale = await s.call("PATCH", `/members/${bob.userId}`, { role: "member" }, undefined, { "if-match": tag0 });
  expect(stale.status).toBe(412);
  expect(((await stale.json()) as { error: string }).error).toBe("precondition_failed");
  expect((await s.call("DELETE", `/members/${bob.userId}`, undefined, undefined, { "if-match": tag0 })).status).toBe(412);
  expect(((await (await s.call("GET", `/members/${bob.userId}`)).json()) as { role: string }).role).toBe("admin");
  // Without If-Match, as before.
  expect((await s.call("PATCH", `/members/${bob.userId}`, { role: "member" })).status).toBe(200);
  const now = etag(await s.call("GET", `/members/${bob.userId}`));
  expect((await s.call("DELETE", `/members/${bob.userId}`, undefined, undefined, { "if-match": now })).status).toBe(204);
  expect((await s.call("GET", `/members/${bob.userId}`)).status).toBe(404);
});

test("a key is read with an ETag; revoking it from a stale one is 412 and the key keeps working", async () => {
  const carol = await s.userWithKey("carol@acme.test", "acme", "member");
  const read = await s.call("GET", `/keys/${carol.keyId}`, undefined, carol.key);
  expect(read.status).toBe(200);
  expect(((await read.json()) as { revoked_at: string | null }).revoked_at).toBeNull();
  const stale = await s.call("DELETE", `/keys/${carol.keyId}`, undefined, carol.key, { "if-match": '"not-this-one"' });
  expect(stale.status).toBe(412);
  expect((await s.call("GET", "/me", undefined, carol.key)).status).toBe(200);
  expect((await s.call("DELETE", `/keys/${carol.keyId}`, undefined, carol.key, { "if-match": etag(read) })).status).toBe(204);
  expect((await s.call("GET", "/me", undefined, carol.key)).status).toBe(401);
});

test("a pending invitation is read with an ETag; cancelling it honours If-Match", async () => {
  await s.userWithKey("dave@elsewhere.test", "elsewhere", "owner");
  const added = await s.call("POST", "/members", { email: "dave@elsewhere.test" });
  expect(added.status).toBe(201);
  const { invitation_id } = (await added.json()) as { invitation_id: string };
  const read = await s.call("GET", `/members/invitations/${invitation_id}`);
  expect(read.status).toBe(200);
  expect(((await read.json()) as { email: string }).email).toBe("dave@elsewhere.test");
  expect((await s.call("DELETE", `/members/invitations/${invitation_id}`, undefined, undefined, { "if-match": '"not-this-one"' })).status).toBe(412);
  expect((await s.call("GET", `/members/invitations/${invitation_id}`)).status).toBe(200);
  expect((await s.call("DELETE", `/members/invitations/${invitation_id}`, undefined, undefined, { "if-match": etag(read) })).status).toBe(204);
  expect((await s.call("GET", `/members/invitations/${invitation_id}`)).status).toBe(404);
});

test("the CLI passes --if-match to members update and exits 2 on a stale one", async () => {
  const erin = await s.userWithKey("erin@acme.test", "acme", "member");
  const tag0 = etag(await s.call("GET", `/members/${erin.userId}`));
  const ok = await cli.run(["members", "update", erin.userId, "--role", "admin", "--if-match", tag0]);
  expect(ok.code).toBe(0);
  const stale = await cli.run(["members", "update", erin.userId, "--role", "member", "--if-match", tag0]);
  expect(stale.code).toBe(2);
  expect(stale.stderr).toContain("precondition_failed");
  expect((await cli.run(["members", "remove", "--help"])).stdout).toContain("--if-match");
});

test("MCP remove_member takes if_match; a stale one is an error result and the member stays", async () => {
  const fred = await s.userWithKey("fred@acme.test", "acme", "member");
  const tag0 = etag(await s.call("GET", `/members/${fred.userId}`));
  await s.call("PATCH", `/members/${fred.userId}`, { role: "admin" });
  const home = tempDir("svc-mcp-");
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dir, "..", "src", "main.ts"), "mcp", "--toolsets", "admin"],
      env: { PATH: "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: `${home}/config`, SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stderr: "pipe",
    }),
  );
  try {
    const stale = await client.callTool({ name: "remove_member", arguments: { member: fred.userId, if_match: tag0 } });
    expect(stale.isError).toBe(true);
    expect((stale.structuredContent as { error: string }).error).toBe("precondition_failed");
    expect((await s.call("GET", `/members/${fred.userId}`)).status).toBe(200);
  } finally {
    await client.close();
  }
});
