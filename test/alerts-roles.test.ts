// Who sets where alerts go: owners and admins create, change and delete a project's alert channels (by the API
// and by svc apply); a member lists them, reads their deliveries and sends a test, but cannot redirect or delete
// the team's paging channel.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sourceCli, type SourceCli } from "./helpers/cli-source";
import { writeFolder } from "./helpers/folder";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let member: string;
let admin: string;
const clis: SourceCli[] = [];
const hook = { kind: "webhook", url: "https://hooks.example.test/team", secret: "team-secret-1" };

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  expect((await s.call("POST", "/projects", { name: "Shop" })).status).toBe(201);
  member = (await s.userWithKey("member@acme.test", "acme", "member")).key;
  admin = (await s.userWithKey("admin@acme.test", "acme", "admin")).key;
  expect((await s.call("POST", "/projects/shop/alert-channels", { name: "paging", ...hook })).status).toBe(201);
});
afterAll(async () => {
  for (const c of clis) c.remove();
  await s.stop();
});

test("a member may list the channels, read their deliveries and send a test; creating, changing and deleting one is a 403 that changes nothing", async () => {
  const before = await (await s.call("GET", "/projects/shop/alert-channels/paging")).text();
  expect((await s.call("GET", "/projects/shop/alert-channels", undefined, member)).status).toBe(200);
  expect((await s.call("POST", "/projects/shop/alert-channels/paging/test", undefined, member)).status).toBe(202);
  expect((await s.call("GET", "/projects/shop/alert-channels/paging/deliveries", undefined, member)).status).toBe(200);
  for (const [method, path, body] of [
    ["POST", "/projects/shop/alert-channels", { name: "mine", ...hook }],
    ["PATCH", "/projects/shop/alert-channels/paging", { url: "https://attacker.example.test/stolen" }],
    ["DELETE", "/projects/shop/alert-channels/paging", undefined],
  ] as const) {
    const res = await s.call(method, path, body, member);
    expect({ method, status: res.status }).toEqual({ method, status: 403 });
    const answer = (await res.json()) as { error: string; message: string };
    expect(answer.error).toBe("forbidden");
    expect(answer.message).toContain("alert channels are set by the workspace's owners and admins");
  }
  const after = await (await s.call("GET", "/projects/shop/alert-channels/paging")).text();
  expect(after).toBe(before);
  expect(((await (await s.call("GET", "/projects/shop/alert-channels")).json()) as { data: unknown[] }).data).toHaveLength(1);
});

test("an admin may; and svc apply of a folder that changes a channel is refused for a member, applied for an admin", async () => {
  const made = await s.call("POST", "/projects/shop/alert-channels", { name: "admins", ...hook }, admin);
  expect(made.status).toBe(201);
  expect((await s.call("DELETE", "/projects/shop/alert-channels/admins", undefined, admin)).status).toBe(204);
  const dir = writeFolder({ "alerts/team.yaml": "type: alert_channel\nname: team chat\nkind: slack\nurl: https://hooks.slack.test/services/T/B/C\n" });
  const as = (key: string) => {
    const c = sourceCli({ SVC_SERVER: s.url, SVC_PROJECT: "shop", SVC_API_KEY: key });
    clis.push(c);
    return c;
  };
  const refused = await as(member).run(["apply", dir]);
  expect(refused.code).toBe(3);
  expect(refused.stderr).toContain("alert channels are set by the workspace's owners and admins");
  expect(((await (await s.call("GET", "/projects/shop/alert-channels")).json()) as { data: { name: string }[] }).data.map((c) => c.name)).toEqual(["paging"]);
  const applied = await as(admin).run(["apply", dir]);
  expect(applied.code).toBe(0);
  expect(((await (await s.call("GET", "/projects/shop/alert-channels")).json()) as { data: { name: string }[] }).data.map((c) => c.name).sort()).toEqual([
    "paging",
    "team chat",
  ]);
});
