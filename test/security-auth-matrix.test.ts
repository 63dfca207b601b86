// The auth matrix: every operation × every kind of bad credential is a 401; another workspace's key sees 404s
// for this workspace's resources, and no response body ever carries this workspace's data.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { operations } from "../src/manifest";
import { generateApiKey } from "../src/security/api-keys";
import { startTestServer, type TestServer } from "./helpers/server";
import { VALID_BODIES } from "./helpers/valid-bodies";

let s: TestServer;
const ids: Record<string, string> = {};
const creds: Record<string, string | null> = {};
const MARKER = "acme-private-marker";

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const j = async (r: Promise<Response>) => (await r).json();
  await j(s.call("POST", "/projects", { name: MARKER, slug: "shop", description: MARKER }));
  ids.project = "shop";
  ids.environmentId = (await j(s.call("POST", "/projects/shop/environments", { name: "staging", variables: { V: MARKER } }))).id;
  ids.feature = (await j(s.call("POST", "/projects/shop/features", { name: MARKER }))).id;
  ids.automationId = (
    await j(s.call("POST", "/projects/shop/automations", { name: MARKER, kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] }))
  ).id;
  ids.groupId = (await j(s.call("POST", "/projects/shop/groups", { name: MARKER, automation_ids: [ids.automationId] }))).id;
  ids.runId = (await j(s.call("POST", `/projects/shop/automations/${ids.automationId}/run`))).id;
  ids.groupRunId = (await j(s.call("POST", `/projects/shop/groups/${ids.groupId}/run`))).id;
  ids.name = "shot.png";
  ids.scheduleId = (await j(s.call("POST", "/projects/shop/schedules", { name: MARKER, target: { group: ids.groupId }, interval_seconds: 86_400 }))).id;
  ids.channelId = (await j(s.call("POST", "/projects/shop/alert-channels", { name: MARKER, kind: "slack", url: "https://hooks.example.test/m" }))).id;
  const member = await s.userWithKey("m@acme.test", "acme", "member");
  ids.userId = member.userId;
  ids.keyId = member.keyId;
  await s.userWithKey("invitee@initech.test", "initech", "owner");
  ids.invitationId = (await j(s.call("POST", "/members", { email: "invitee@initech.test", role: "member" }))).invitation_id;

  creds["no key"] = null;
  creds.malformed = "svc_not-a-key";
  creds.unknown = generateApiKey().key;
  const revoked = await s.userWithKey("r@acme.test", "acme", "owner");
  await s.call("DELETE", `/keys/${revoked.keyId}`, undefined, revoked.key);
  creds.revoked = revoked.key;
  const expired = await s.userWithKey("e@acme.test", "acme", "owner", { inMs: 1000 });
  creds.expired = expired.key;
  const removed = await s.userWithKey("x@acme.test", "acme", "admin");
  await s.call("DELETE", `/members/${removed.userId}`);
  creds["removed member"] = removed.key;
  await Bun.sleep(Math.max(0, Date.parse(expired.expiresAt ?? "") - Date.now()) + 100);
});
afterAll(() => s.stop());

const path = (p: string) => p.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(ids[n] ?? "x"));
const bodyFor = (name: string) => VALID_BODIES[name] ?? {};

describe("every operation with every bad credential is 401 and changes nothing", () => {
  for (const kind of ["no key", "malformed", "unknown", "revoked", "expired", "removed member"]) {
    test(kind, async () => {
      const before = await (await s.call("GET", "/projects/shop/automations?limit=200")).text();
      for (const op of operations) {
        const res = await s.call(op.method, path(op.path), op.body ? bodyFor(op.name) : undefined, creds[kind] ?? null);
        const text = await res.text();
        expect({ op: op.name, status: res.status }).toEqual({ op: op.name, status: 401 });
        expect(JSON.parse(text).error).toBe("unauthorized");
        expect(text).not.toContain(MARKER);
      }
      expect(await (await s.call("GET", "/projects/shop/automations?limit=200")).text()).toBe(before);
    });
  }
});

describe("another workspace's key", () => {
  test("gets 404 for every resource of this workspace and never sees its data", async () => {
    const other = await s.userWithKey("o@globex.test", "globex", "owner");
    const allowedOwn = new Set([
      "whoami",
      "list_projects",
      "get_dashboard",
      "create_project",
      "list_keys",
      "list_members",
      "add_member",
      "list_invitations",
      "list_workspace_invitations",
      "list_runners",
      "create_runner",
      "list_assistant_conversations",
    ]);
    for (const op of operations) {
      if (allowedOwn.has(op.name)) continue;
      const res = await s.call(op.method, path(op.path), op.body ? bodyFor(op.name) : undefined, other.key);
      // A session-only operation refuses every API key before reading anything.
      if (op.sessionOnly) {
        expect({ op: op.name, status: res.status }).toEqual({ op: op.name, status: 403 });
        continue;
      }
      const text = await res.text();
      expect({ op: op.name, status: res.status }).toEqual({ op: op.name, status: 404 });
      expect(text).not.toContain(MARKER);
    }
    for (const name of ["whoami", "list_projects", "get_dashboard", "list_keys", "list_members", "list_workspace_invitations"]) {
      const op = operations.find((o) => o.name === name);
      if (!op) throw new Error(name);
      const res = await s.call("GET", op.path, undefined, other.key);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain(MARKER);
      expect(text).not.toContain("acme.test");
    }
    // The acme records are all still there.
    expect((await (await s.call("GET", "/members/invitations")).json()).data.map((i: { id: string }) => i.id)).toEqual([ids.invitationId]);
    expect((await s.call("GET", `/projects/shop/automations/${ids.automationId}`)).status).toBe(200);
  });
});
