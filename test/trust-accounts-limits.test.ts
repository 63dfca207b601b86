// Limits that must not let one person lock others out: sign-in guesses from one address do not lock the account
// for its owner elsewhere, and the workspace's request budget never blocks revoking a key or removing a member.
import { afterEach, describe, expect, test } from "bun:test";
import { WebClient } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer | null = null;
afterEach(async () => {
  await s?.stop();
  s = null;
});

const OWNER = { email: "owner@acme.test", password: "correct horse battery" };

function signInFrom(server: TestServer, ip: string, email: string, password: string): Promise<Response> {
  return new WebClient(server.url).send("POST", "/api/v1/web/login", { email, password }, { "x-forwarded-for": ip });
}

describe("sign-in limits", () => {
  test("guesses from one address are refused there, while the right password from another address still signs in (slowed down)", async () => {
    s = await startTestServer({ trust_proxy: true });
    const attacker = "203.0.113.7";
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await signInFrom(s, attacker, OWNER.email, `guess ${i}`)).status);
    expect(statuses.slice(0, 10).every((x) => x === 401)).toBe(true);
    const refused = await signInFrom(s, attacker, OWNER.email, "guess again");
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: "rate_limited" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // Even the right password is refused from the guessing address…
    expect((await signInFrom(s, attacker, OWNER.email, OWNER.password)).status).toBe(429);

    // …but not from the owner's own address: the account's spent budget only slows the attempt down.
    const started = performance.now();
    const owner = await signInFrom(s, "198.51.100.9", OWNER.email, OWNER.password);
    expect(owner.status).toBe(200);
    expect((await owner.json()).user.email).toBe(OWNER.email);
    expect(performance.now() - started).toBeGreaterThan(1_500);
    // A wrong password from a new address is an ordinary 401 (slowed), not a lock-out.
    expect((await signInFrom(s, "198.51.100.10", OWNER.email, "not it")).status).toBe(401);
  }, 60_000);
});

describe("the workspace budget never blocks stopping a key or a member", () => {
  test("after a member's key spends the budget, the owner still revokes a key and removes that member", async () => {
    s = await startTestServer({ rate_limit: { per_ip_per_hour: 10_000, per_workspace_per_hour: 5 } });
    const spender = await s.userWithKey("spender@acme.test", "acme", "member");
    const spare = await s.userWithKey("owner@acme.test", "acme", "owner");
    for (let i = 0; i < 5; i++) expect((await s.call("GET", "/projects", undefined, spender.key)).status).toBe(200);
    expect((await s.call("GET", "/projects", undefined, spender.key)).status).toBe(429);
    expect((await s.call("GET", "/projects")).status).toBe(429);

    const revoked = await s.call("DELETE", `/keys/${spare.keyId}`);
    expect(revoked.status).toBe(204);
    expect((await s.call("GET", "/projects", undefined, spare.key)).status).toBe(401);

    const removed = await s.call("DELETE", `/members/${spender.userId}`);
    expect(removed.status).toBe(204);
    expect((await s.call("GET", "/projects", undefined, spender.key)).status).toBe(401);
    // Everything else still counts against the spent budget.
    expect((await s.call("GET", "/projects")).status).toBe(429);
  });

  test("the per-IP limit still applies to removing a member", async () => {
    s = await startTestServer({ rate_limit: { per_ip_per_hour: 3, per_workspace_per_hour: 10_000 } });
    const member = await s.userWithKey("member@acme.test", "acme", "member");
    for (let i = 0; i < 3; i++) expect((await s.call("GET", "/projects")).status).toBe(200);
    const refused = await s.call("DELETE", `/members/${member.userId}`);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: "rate_limited" });
    const still = await s.server.core.db.selectFrom("memberships").select("role").where("user_id", "=", member.userId).executeTakeFirst();
    expect(still?.role).toBe("member");
  });
});
