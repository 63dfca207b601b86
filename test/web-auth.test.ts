// The web application's server side over real HTTP: first-run setup, sign-in and its limits, session cookies,
// CSRF, key creation by a signed-in person, password setup from an invitation, and member removal.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { RunningServer } from "../src/server";
import { startEmptyServer, WebClient } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

const OWNER = { workspace: "Acme QA", name: "Olga Owner", email: "olga@acme.test", password: "first owner password" };

describe("first run", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startEmptyServer();
  });
  afterAll(() => server.stop());

  test("setup is offered only while no user exists, and signs the owner in", async () => {
    const c = new WebClient(server.url);
    const before = await (await c.send("GET", "/api/v1/web/session")).json();
    expect(before).toMatchObject({ setup_required: true, signed_in: false });

    const bad = await c.send("POST", "/api/v1/web/setup", { ...OWNER, password: "short" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "invalid_request", details: [{ path: "body.password" }] });

    const res = await c.send("POST", "/api/v1/web/setup", OWNER);
    expect(res.status).toBe(201);
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^svc_session=[0-9A-Za-z]{43};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).not.toContain("Secure");
    const me = await (await c.send("GET", "/api/v1/ops/me")).json();
    expect(me).toMatchObject({ user: { email: OWNER.email }, workspace: { name: "Acme QA", slug: "acme-qa" }, role: "owner", key: null });

    const again = await new WebClient(server.url).send("POST", "/api/v1/web/setup", { ...OWNER, email: "mallory@evil.test" });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: "conflict" });
    const after = await (await new WebClient(server.url).send("GET", "/api/v1/web/session")).json();
    expect(after).toMatchObject({ setup_required: false, signed_in: false });
  });

  test("the entry page and the invitation page are served from the bundle", async () => {
    for (const path of ["/", "/setup-password?token=x"]) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain('<div id="app">');
      const js = /src="(\/[^"]+\.js)"/.exec(html)?.[1];
      expect(js).toBeDefined();
      const bundle = await fetch(`${server.url}${js}`);
      expect(bundle.status).toBe(200);
      expect(await bundle.text()).toContain("/api/v1/web");
    }
  });
});

test("two setups racing create exactly one owner", async () => {
  const server = await startEmptyServer();
  try {
    const statuses = await Promise.all(
      ["a@race.test", "b@race.test"].map(async (email) => (await new WebClient(server.url).send("POST", "/api/v1/web/setup", { ...OWNER, email })).status),
    );
    expect(statuses.sort()).toEqual([201, 409]);
    const users = await server.core.db.selectFrom("users").select("email").execute();
    expect(users.length).toBe(1);
  } finally {
    await server.stop();
  }
});

test("sign-in attempts are limited per client address across accounts", async () => {
  const server = await startEmptyServer();
  try {
    const c = new WebClient(server.url);
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await c.signIn(`user${i}@ip.test`, "guess")).status);
    expect(statuses.slice(0, 60).every((x) => x === 401)).toBe(true);
    expect(statuses[60]).toBe(429);
  } finally {
    await server.stop();
  }
}, 60_000);

describe("signed in", () => {
  let s: TestServer;
  const email = "owner@acme.test";
  const password = "correct horse battery";
  beforeAll(async () => {
    s = await startTestServer({ trust_proxy: true });
  });
  afterAll(() => s.stop());

  test("a wrong password is refused with a message, and creates no session", async () => {
    const c = new WebClient(s.url);
    const res = await c.signIn(email, "wrong password");
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: "unauthorized", message: "wrong email or password" });
    expect(res.headers.get("set-cookie")).toBeNull();
    const unknown = await c.signIn("nobody@acme.test", password);
    expect(unknown.status).toBe(401);
  });

  test("bad sign-in input gets the error shape", async () => {
    const c = new WebClient(s.url);
    expect((await c.send("POST", "/api/v1/web/login", { email })).status).toBe(400);
    const notJson = await fetch(`${s.url}/api/v1/web/login`, { method: "POST", headers: { "content-type": "text/plain" }, body: "email=x" });
    expect(notJson.status).toBe(415);
    expect(await notJson.json()).toMatchObject({ error: "unsupported_media_type" });
    const broken = await fetch(`${s.url}/api/v1/web/login`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(broken.status).toBe(400);
  });

  test("sign-in from another site is refused; the configured public URL counts as this site", async () => {
    const c = new WebClient(s.url);
    const forged = await c.send("POST", "/api/v1/web/login", { email, password }, { origin: "http://evil.test" });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("set-cookie")).toBeNull();
    const proxied = await startTestServer({ base_url: "https://svc.example.test" });
    try {
      const viaProxy = await new WebClient(proxied.url).send("POST", "/api/v1/web/login", { email, password }, { origin: "https://svc.example.test" });
      expect(viaProxy.status).toBe(200);
      const state = await (await new WebClient(proxied.url).send("GET", "/api/v1/web/session")).json();
      expect(state.base_url).toBe("https://svc.example.test");
    } finally {
      await proxied.stop();
    }
  });

  test("the cookie is Secure when served over HTTPS behind a trusted proxy", async () => {
    const c = new WebClient(s.url);
    const res = await c.send("POST", "/api/v1/web/login", { email, password }, { "x-forwarded-proto": "https" });
    expect(res.status).toBe(200);
    expect(res.headers.get("set-cookie")).toContain("; Secure");
  });

  test("state-changing operations need the CSRF token and a same-site origin", async () => {
    const c = new WebClient(s.url);
    expect((await c.signIn(email, password)).status).toBe(200);
    const withoutToken = await fetch(`${s.api}/projects`, {
      method: "POST",
      headers: { cookie: c.cookie, "content-type": "application/json" },
      body: JSON.stringify({ name: "Forged" }),
    });
    expect(withoutToken.status).toBe(403);
    expect(await withoutToken.json()).toMatchObject({ error: "forbidden" });
    const wrongToken = await fetch(`${s.api}/projects`, {
      method: "POST",
      headers: { cookie: c.cookie, "x-csrf-token": "x".repeat(32), "content-type": "application/json" },
      body: JSON.stringify({ name: "Forged" }),
    });
    expect(wrongToken.status).toBe(403);
    const otherOrigin = await c.send("POST", "/api/v1/ops/projects", { name: "Forged" }, { origin: "http://evil.test" });
    expect(otherOrigin.status).toBe(403);
    const list = await (await s.call("GET", "/projects")).json();
    expect(list.data.map((p: { name: string }) => p.name)).not.toContain("Forged");

    const ok = await c.send("POST", "/api/v1/ops/projects", { name: "Real" });
    expect(ok.status).toBe(201);
    const reads = await c.send("GET", "/api/v1/ops/projects");
    expect(reads.status).toBe(200);
  });

  test("a signed-in person creates a key that works with the API until it is revoked", async () => {
    const c = new WebClient(s.url);
    await c.signIn(email, password);
    const created = await c.send("POST", "/api/v1/ops/keys", { name: "laptop", expires_at: new Date(Date.now() + 86400_000).toISOString() });
    expect(created.status).toBe(201);
    const k = await created.json();
    expect(k.key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
    expect(k.prefix).toBe(k.key.slice(0, 12));
    const me = await s.call("GET", "/me", undefined, k.key);
    expect(me.status).toBe(200);
    expect((await me.json()).key.prefix).toBe(k.prefix);
    const listed = await (await c.send("GET", "/api/v1/ops/keys")).json();
    expect(JSON.stringify(listed)).not.toContain(k.key);
    expect(listed.data.find((x: { id: string }) => x.id === k.id)).toMatchObject({ name: "laptop", prefix: k.prefix, revoked_at: null });
    expect((await c.send("DELETE", `/api/v1/ops/keys/${k.id}`)).status).toBe(204);
    expect((await s.call("GET", "/me", undefined, k.key)).status).toBe(401);
  });

  test("keys cannot mint keys, and key creation checks its input and the CSRF token", async () => {
    const withKey = await fetch(`${s.url}/api/v1/ops/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x" }),
    });
    expect(withKey.status).toBe(403);
    const anonymous = await new WebClient(s.url).send("POST", "/api/v1/ops/keys", { name: "x" });
    expect(anonymous.status).toBe(401);
    const c = new WebClient(s.url);
    await c.signIn(email, password);
    const past = await c.send("POST", "/api/v1/ops/keys", { name: "old", expires_at: "2000-01-01T00:00:00Z" });
    expect(past.status).toBe(400);
    expect((await c.send("POST", "/api/v1/ops/keys", { name: "" })).status).toBe(400);
    const noCsrf = await fetch(`${s.url}/api/v1/ops/keys`, {
      method: "POST",
      headers: { cookie: c.cookie, "content-type": "application/json" },
      body: JSON.stringify({ name: "x" }),
    });
    expect(noCsrf.status).toBe(403);
  });

  test("a person in two workspaces switches between them; the session then acts only in the chosen one", async () => {
    await s.userWithKey("two@acme.test", "acme", "admin");
    await s.userWithKey("two@acme.test", "globex", "member");
    await s.userWithKey("boss@initech.test", "initech", "owner");
    const c = new WebClient(s.url);
    expect((await c.signIn("two@acme.test", password)).status).toBe(200);
    const state = await (await c.send("GET", "/api/v1/web/session")).json();
    expect(state.workspace.slug).toBe("acme");
    expect(state.role).toBe("admin");
    expect(state.workspaces.map((w: { slug: string; role: string }) => `${w.slug}:${w.role}`).sort()).toEqual(["acme:admin", "globex:member"]);
    expect((await c.send("POST", "/api/v1/ops/projects", { name: "Acme only" })).status).toBe(201);

    // Refused without the CSRF token, for a workspace of someone else (404, as any other workspace's resource), and for bad input.
    const noCsrf = await fetch(`${s.url}/api/v1/web/workspace`, {
      method: "POST",
      headers: { cookie: c.cookie, "content-type": "application/json" },
      body: '{"workspace":"globex"}',
    });
    expect(noCsrf.status).toBe(403);
    const foreign = await c.send("POST", "/api/v1/web/workspace", { workspace: "initech" });
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ error: "not_found" });
    expect((await c.send("POST", "/api/v1/web/workspace", {})).status).toBe(400);
    expect((await (await c.send("GET", "/api/v1/ops/me")).json()).workspace.slug).toBe("acme");
    expect((await new WebClient(s.url).send("POST", "/api/v1/web/workspace", { workspace: "globex" })).status).toBe(401);

    const moved = await c.send("POST", "/api/v1/web/workspace", { workspace: "globex" });
    expect(moved.status).toBe(200);
    const body = await moved.json();
    expect(body).toMatchObject({ workspace: { slug: "globex" }, role: "member" });
    expect((await (await c.send("GET", "/api/v1/ops/me")).json()).workspace.slug).toBe("globex");
    const projects = await (await c.send("GET", "/api/v1/ops/projects")).json();
    expect(projects.data.map((p: { name: string }) => p.name)).not.toContain("Acme only");
    // A member there: not allowed what an admin of acme was.
    expect((await c.send("POST", "/api/v1/ops/members", { email: "new@globex.test", role: "member" })).status).toBe(403);

    const back = await c.send("POST", "/api/v1/web/workspace", { workspace: state.workspace.id });
    expect(back.status).toBe(200);
    expect((await (await c.send("GET", "/api/v1/ops/projects")).json()).data.map((p: { name: string }) => p.name)).toContain("Acme only");
  });

  test("signing out ends the session", async () => {
    const c = new WebClient(s.url);
    await c.signIn(email, password);
    const cookie = c.cookie;
    const out = await c.send("POST", "/api/v1/web/logout");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    const after = await fetch(`${s.api}/me`, { headers: { cookie } });
    expect(after.status).toBe(401);
  });

  test("an invited member sets a password from the link once, and removal ends their session and keys", async () => {
    const owner = new WebClient(s.url);
    await owner.signIn(email, password);
    const added = await owner.send("POST", "/api/v1/ops/members", { email: "mia@acme.test", name: "Mia", role: "member" });
    expect(added.status).toBe(201);
    const m = await added.json();
    const url = new URL(m.setup_url);
    expect(url.pathname).toBe("/setup-password");
    const token = url.searchParams.get("token") ?? "";
    const info = await fetch(`${s.url}/api/v1/web/setup-password?token=${token}`);
    expect(await info.json()).toEqual({ email: "mia@acme.test", name: "Mia" });

    const mia = new WebClient(s.url);
    expect((await mia.send("POST", "/api/v1/web/setup-password", { token, password: "short" })).status).toBe(400);
    const set = await mia.send("POST", "/api/v1/web/setup-password", { token, password: "mia's new password" });
    expect(set.status).toBe(200);
    expect((await new WebClient(s.url).send("POST", "/api/v1/web/setup-password", { token, password: "another password" })).status).toBe(400);
    expect((await fetch(`${s.url}/api/v1/web/setup-password?token=${token}`)).status).toBe(404);

    const key = await (await mia.send("POST", "/api/v1/ops/keys", { name: "mia ci" })).json();
    expect((await s.call("GET", "/projects", undefined, key.key)).status).toBe(200);
    expect((await mia.send("GET", "/api/v1/ops/me")).status).toBe(200);

    expect((await owner.send("DELETE", `/api/v1/ops/members/${m.user_id}`)).status).toBe(204);
    expect((await s.call("GET", "/projects", undefined, key.key)).status).toBe(401);
    expect((await mia.send("GET", "/api/v1/ops/me")).status).toBe(401);
    expect((await new WebClient(s.url).signIn("mia@acme.test", "mia's new password")).status).toBe(401);
  });

  test("sign-in attempts are limited per account", async () => {
    const c = new WebClient(s.url);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await c.signIn("target@acme.test", `guess ${i}`)).status);
    expect(statuses.slice(0, 10).every((x) => x === 401)).toBe(true);
    const limited = await c.signIn("target@acme.test", "guess again");
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await limited.json()).toMatchObject({ error: "rate_limited" });
  });
});
