// The response cache answers only the reads the manifest declares `cached`, whose answers depend on nothing but
// the workspace's stored records: never an answer that differs by user, role or key.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { z } from "zod";
import { isCacheable } from "../src/http/response-cache";
import { operations } from "../src/manifest";
import { defineOperation } from "../src/manifest/define";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
});
afterAll(() => s.stop());

test("a read-only GET is answered from the cache only when its operation declares it", () => {
  const read = {
    name: "read_thing",
    method: "GET" as const,
    path: "/things",
    summary: "Read a thing",
    response: z.object({}),
    hints: { readOnly: true },
    cli: { words: ["things"] },
  };
  expect(isCacheable(defineOperation(read))).toBe(false);
  expect(isCacheable(defineOperation({ ...read, cached: true }))).toBe(true);
  expect(
    operations
      .filter(isCacheable)
      .map((o) => o.name)
      .sort(),
  ).toEqual([
    "get_automation",
    "get_automation_history",
    "get_dashboard",
    "get_environment",
    "get_feature",
    "get_generation",
    "get_group",
    "get_group_run",
    "get_project",
    "get_project_history",
    "get_run",
    "list_automation_runs",
    "list_automations",
    "list_environments",
    "list_features",
    "list_group_runs",
    "list_groups",
    "list_members",
    "list_projects",
    "list_runs",
  ]);
});

test("a person's own invitations are never shown to another member of the same workspace", async () => {
  const ann = await s.userWithKey("ann@initech.test", "initech", "owner");
  const bob = await s.userWithKey("bob@initech.test", "initech", "member");
  expect((await s.call("POST", "/members", { email: "ann@initech.test", role: "member" })).status).toBe(201);
  // Both keys already in use, as on any busy workspace.
  expect((await s.call("GET", "/projects", undefined, bob.key)).status).toBe(200);
  expect((await s.call("GET", "/projects", undefined, ann.key)).status).toBe(200);
  const annsList = await (await s.call("GET", "/invitations", undefined, ann.key)).json();
  expect(annsList.data.map((i: { workspace: { slug: string } }) => i.workspace.slug)).toEqual(["acme"]);
  const bobsList = await (await s.call("GET", "/invitations", undefined, bob.key)).json();
  expect(bobsList.data).toEqual([]);
});

test("the workspace's pending invitations an admin has read stay refused to a member", async () => {
  const member = await s.userWithKey("mo@acme.test", "acme", "member");
  await s.userWithKey("cy@initech.test", "initech", "owner");
  expect((await s.call("POST", "/members", { email: "cy@initech.test", role: "admin" })).status).toBe(201);
  expect((await s.call("GET", "/projects", undefined, member.key)).status).toBe(200);
  const asOwner = await s.call("GET", "/members/invitations");
  expect(asOwner.status).toBe(200);
  expect((await asOwner.json()).data.length).toBeGreaterThan(0);
  const asMember = await s.call("GET", "/members/invitations", undefined, member.key);
  expect(asMember.status).toBe(403);
  expect(await asMember.json()).toMatchObject({ error: "forbidden" });
});
