// add_member over real HTTP: the user, the membership and the password-setup link are written together or not
// at all — a failure injected into the real SQLite file (a trigger) leaves nothing behind, and adding again works.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let workspaceId: string;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  workspaceId = (await (await s.call("GET", "/me")).json()).workspace.id;
});
afterAll(() => s.stop());

interface UserRow {
  id: string;
  password_hash: string | null;
  setup_token_hash: string | null;
  setup_token_expires_at: string | null;
}

/** Rows read through a second connection to the server's database, as another process would. */
async function userRow(email: string): Promise<UserRow | null> {
  const [row] = await s.sql<UserRow>("SELECT id, password_hash, setup_token_hash, setup_token_expires_at FROM users WHERE email = ?", email);
  return row ?? null;
}

async function membershipRole(userId: string): Promise<string | null> {
  const [row] = await s.sql<{ role: string }>("SELECT role FROM memberships WHERE workspace_id = ? AND user_id = ?", workspaceId, userId);
  return row?.role ?? null;
}

function tokenOf(setupUrl: string): string {
  const url = new URL(setupUrl);
  expect(url.pathname).toBe("/setup-password");
  return url.searchParams.get("token") ?? "";
}

/** Spends a setup link as the invited person would, then signs in with the new password. */
async function useSetupLink(token: string, email: string, password: string) {
  const set = await fetch(`${s.url}/api/v1/web/setup-password`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token, password }),
  });
  expect(set.status).toBe(200);
  expect((await set.json()).user.email).toBe(email);
  const login = await fetch(`${s.url}/api/v1/web/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  expect(login.status).toBe(200);
}

describe("add_member", () => {
  test("a new user comes with their membership and a working one-time setup link", async () => {
    const res = await s.call("POST", "/members", { email: "Nina@Acme.test", name: "Nina", role: "admin" });
    expect(res.status).toBe(201);
    const m = await res.json();
    expect(m).toMatchObject({ email: "nina@acme.test", name: "Nina", role: "admin" });
    // The link names the address the request came to (here the test server's real port), not the bind address.
    expect(m.setup_url).toStartWith(`${s.url}/setup-password?token=`);
    const token = tokenOf(m.setup_url);
    expect(token).toMatch(/^[0-9A-Za-z]{40}$/);

    const row = await userRow("nina@acme.test");
    expect(row?.id).toBe(m.user_id);
    expect(row?.password_hash).toBeNull();
    // Only the hash of the link's token is stored, and it expires in 7 days.
    expect(row?.setup_token_hash).toBe(createHash("sha256").update(token).digest("hex"));
    const expires = Date.parse(row?.setup_token_expires_at ?? "");
    expect(expires - Date.now()).toBeGreaterThan(7 * 24 * 3600 * 1000 - 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(7 * 24 * 3600 * 1000);
    expect(await membershipRole(m.user_id)).toBe("admin");

    await useSetupLink(token, "nina@acme.test", "ninas own password");
    expect((await userRow("nina@acme.test"))?.setup_token_hash).toBeNull();
  });

  test("when writing the setup link fails, neither the user nor the membership is left behind", async () => {
    const email = "half@acme.test";
    if (s.databaseUrl) {
      await s.sql(`CREATE FUNCTION fail_setup_link() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'injected: the setup link cannot be written'; END $$`);
      await s.sql(`CREATE TRIGGER fail_setup_link BEFORE UPDATE OF setup_token_hash ON users FOR EACH ROW
        WHEN (NEW.setup_token_hash IS NOT NULL AND NEW.email = '${email}') EXECUTE FUNCTION fail_setup_link()`);
    } else {
      await s.sql(`CREATE TRIGGER fail_setup_link BEFORE UPDATE OF setup_token_hash ON users
        WHEN NEW.setup_token_hash IS NOT NULL AND NEW.email = '${email}'
        BEGIN SELECT RAISE(ABORT, 'injected: the setup link cannot be written'); END`);
    }
    try {
      const failed = await s.call("POST", "/members", { email, role: "member" });
      expect(failed.status).toBe(500);
      expect((await failed.json()).error).toBe("internal_error");
      expect(await userRow(email)).toBeNull();
      const members = await (await s.call("GET", "/members?limit=200")).json();
      expect(members.data.map((x: { email: string }) => x.email)).not.toContain(email);
    } finally {
      await s.sql(s.databaseUrl ? "DROP TRIGGER fail_setup_link ON users" : "DROP TRIGGER fail_setup_link");
    }

    // Nothing half-done: adding them again is not a 409, and the new link works.
    const again = await s.call("POST", "/members", { email, role: "member" });
    expect(again.status).toBe(201);
    const m = await again.json();
    expect(await membershipRole(m.user_id)).toBe("member");
    await useSetupLink(tokenOf(m.setup_url), email, "half's password now whole");
  });

  test("adding a member twice is a 409 that changes nothing, also when both requests race", async () => {
    const first = await (await s.call("POST", "/members", { email: "twice@acme.test", role: "member" })).json();
    const before = await userRow("twice@acme.test");
    const again = await s.call("POST", "/members", { email: "twice@acme.test", role: "admin" });
    expect(again.status).toBe(409);
    expect((await again.json()).error).toBe("conflict");
    expect(await userRow("twice@acme.test")).toEqual(before);
    expect(await membershipRole(first.user_id)).toBe("member");

    const racing = await Promise.all([1, 2, 3].map(() => s.call("POST", "/members", { email: "race@acme.test", role: "member" })));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const winner = await racing.find((r) => r.status === 201)?.json();
    // The link handed out is the one stored: no later request replaced it.
    expect((await userRow("race@acme.test"))?.setup_token_hash).toBe(createHash("sha256").update(tokenOf(winner.setup_url)).digest("hex"));
  });

  test("a user of another workspace is invited, not added: no link, no membership yet, and another workspace's link stays valid", async () => {
    const withPassword = await s.userWithKey("known@globex.test", "globex", "owner");
    const joined = await s.call("POST", "/members", { email: "known@globex.test", role: "member" });
    expect(joined.status).toBe(201);
    const m = await joined.json();
    expect(m).toMatchObject({ user_id: null, status: "invited", setup_url: null });
    expect(await membershipRole(withPassword.userId)).toBeNull();
    expect((await userRow("known@globex.test"))?.setup_token_hash).toBeNull();

    const other = await s.userWithKey("boss@initech.test", "initech", "owner");
    const invited = await (await s.call("POST", "/members", { email: "pending@initech.test", role: "member" }, other.key)).json();
    const oldToken = tokenOf(invited.setup_url);
    const here = await (await s.call("POST", "/members", { email: "pending@initech.test", role: "member" })).json();
    expect(here).toMatchObject({ user_id: null, status: "invited", setup_url: null });
    expect(await membershipRole(invited.user_id)).toBeNull();
    await useSetupLink(oldToken, "pending@initech.test", "pending no longer");
  });
});
