// No workspace's admin obtains a credential for someone who already has an account: adding such an address makes
// an invitation the person accepts once signed in, another workspace's setup link is never replaced, and the
// answer shows nothing of the account. `svc admin create-user` without a password prints the setup link.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { explained, launchBrowser, newPage, signInAsOwner, WebClient } from "./helpers/browser";
import { databaseEnv, startTestServer, tempDir, type TestServer } from "./helpers/server";

setDefaultTimeout(30_000);

let s: TestServer;
let globex: { key: string; userId: string };

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  globex = await s.userWithKey("boss@globex.test", "globex", "owner");
});
afterAll(() => s.stop());

function tokenOf(setupUrl: string): string {
  return new URL(setupUrl).searchParams.get("token") ?? "";
}

async function setPassword(token: string, password: string): Promise<WebClient> {
  const c = new WebClient(s.url);
  const res = await c.send("POST", "/api/v1/web/setup-password", { token, password });
  expect(res.status).toBe(200);
  return c;
}

describe("add_member for an address that already has an account", () => {
  test("another workspace's admin gets no link, cannot void the first link, and learns nothing of the account", async () => {
    const first = await (await s.call("POST", "/members", { email: "vic@acme.test", name: "Victoria", role: "member" })).json();
    expect(first.status).toBe("member");
    const acmeToken = tokenOf(first.setup_url);

    const res = await s.call("POST", "/members", { email: "VIC@acme.test", name: "Whoever", role: "owner" }, globex.key);
    expect(res.status).toBe(201);
    const invited = await res.json();
    expect(invited).toMatchObject({ user_id: null, email: "vic@acme.test", name: "Whoever", role: "owner", status: "invited", setup_url: null });
    expect(invited.invitation_id).toStartWith("inv_");
    // The same fields as for a new address, and nothing of the account in them.
    const fresh = await (await s.call("POST", "/members", { email: "newbie@globex.test" }, globex.key)).json();
    expect(Object.keys(invited).sort()).toEqual(Object.keys(fresh).sort());
    const text = JSON.stringify(invited);
    expect(text).not.toContain("Victoria");
    expect(text).not.toContain(first.user_id);

    // Adding again is a conflict that changes nothing; the person is not a member of globex.
    expect((await s.call("POST", "/members", { email: "vic@acme.test" }, globex.key)).status).toBe(409);
    const globexMembers = await (await s.call("GET", "/members?limit=200", undefined, globex.key)).json();
    expect(globexMembers.data.map((m: { email: string }) => m.email)).not.toContain("vic@acme.test");

    // acme's link still works and signs the person in to acme with acme's role.
    const vic = await setPassword(acmeToken, "victoria's password");
    expect(await (await vic.send("GET", "/api/v1/ops/me")).json()).toMatchObject({ workspace: { slug: "acme" }, role: "member" });

    // Once signed in, the person sees the invitation and accepts it; then they are globex's owner as invited.
    const list = await (await vic.send("GET", "/api/v1/ops/invitations")).json();
    expect(list.data).toEqual([
      {
        id: invited.invitation_id,
        workspace: { id: expect.any(String), name: "globex", slug: "globex" },
        role: "owner",
        invited_by: { name: "boss", email: "boss@globex.test" },
        created_at: expect.any(String),
      },
    ]);
    const accepted = await vic.send("POST", `/api/v1/ops/invitations/${invited.invitation_id}/accept`);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ workspace: { slug: "globex" }, role: "owner" });
    expect((await (await vic.send("GET", "/api/v1/ops/invitations")).json()).data).toEqual([]);
    expect((await vic.send("POST", "/api/v1/web/workspace", { workspace: "globex" })).status).toBe(200);
    expect(await (await vic.send("GET", "/api/v1/ops/me")).json()).toMatchObject({ workspace: { slug: "globex" }, role: "owner" });
  });

  test("a person with a password is invited, keeps their password, and may decline; nobody else can answer their invitation", async () => {
    const known = await s.userWithKey("known@initech.test", "initech", "owner");
    const inv = await (await s.call("POST", "/members", { email: "known@initech.test", role: "admin" })).json();
    expect(inv).toMatchObject({ status: "invited", setup_url: null, user_id: null });

    // Someone else (here globex's owner) cannot see, accept or decline it.
    expect((await (await s.call("GET", "/invitations", undefined, globex.key)).json()).data).toEqual([]);
    expect((await s.call("POST", `/invitations/${inv.invitation_id}/accept`, undefined, globex.key)).status).toBe(404);
    expect((await s.call("DELETE", `/invitations/${inv.invitation_id}`, undefined, globex.key)).status).toBe(404);

    const c = new WebClient(s.url);
    expect((await c.signIn("known@initech.test", "correct horse battery")).status).toBe(200);
    expect((await (await s.call("GET", "/invitations", undefined, known.key)).json()).data.length).toBe(1);
    expect((await c.send("DELETE", `/api/v1/ops/invitations/${inv.invitation_id}`)).status).toBe(204);
    expect((await c.send("POST", `/api/v1/ops/invitations/${inv.invitation_id}/accept`)).status).toBe(404);
    const acme = await (await s.call("GET", "/members?limit=200")).json();
    expect(acme.data.map((m: { email: string }) => m.email)).not.toContain("known@initech.test");
  });
});

test("svc admin create-user without a password prints a setup link, and never replaces a live one", async () => {
  const dataDir = tempDir("svc-admin-");
  const root = join(import.meta.dir, "..");
  const run = async (...args: string[]) => runWith({ SVC_BASE_URL: "https://svc.example.test" }, ...args);
  const runWith = async (env: Record<string, string>, ...args: string[]) => {
    const p = Bun.spawn(["bun", join(root, "src/main.ts"), "admin", "create-user", "--data-dir", dataDir, ...args], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, SVC_BASE_URL: "", ...env, ...(await databaseEnv(dataDir)) },
    });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    return out;
  };
  const out = await run("--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme", "--role", "owner");
  const link = /password-setup link[^:]*: (\S+)/.exec(out)?.[1] ?? "";
  expect(link).toStartWith("https://svc.example.test/setup-password?token=");
  // base_url set: the link is where people reach svc, nothing more to say.
  expect(out).not.toContain("set base_url");
  // Without it, the link names the configured listener, and says so.
  const plain = await runWith({ SVC_PORT: "9123" }, "--email", "dev@acme.test", "--name", "Dev", "--workspace", "acme", "--role", "member");
  expect(plain).toContain("password-setup link (one-time, valid 7 days): http://127.0.0.1:9123/setup-password?token=");
  expect(plain).toContain("set base_url (SVC_BASE_URL) and links use it");
  const again = await run("--email", "ops@acme.test", "--name", "Ops", "--workspace", "beta", "--role", "member");
  expect(again).not.toContain("token=");
  expect(again).toContain("unused password-setup link");

  const { startTestServer: start } = await import("./helpers/server");
  const server = await start({ data_dir: dataDir });
  try {
    const res = await fetch(`${server.url}/api/v1/web/setup-password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: tokenOf(link), password: "operator's password" }),
    });
    expect(res.status).toBe(200);
  } finally {
    await server.stop();
  }
});

describe("in the web application", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  test("a signed-in person sees a pending invitation and accepts it; the workspace appears in the switcher", async () => {
    await s.userWithKey("ann@umbrella.test", "umbrella", "owner");
    const inv = await (await s.call("POST", "/members", { email: "ann@umbrella.test", role: "member" })).json();
    expect(inv.status).toBe("invited");
    const { context, page } = await newPage(browser);
    try {
      await explained(page, "invitation-accept", async () => {
        await signInAsOwner(page, s.url, "ann@umbrella.test");
        const row = page.locator("[data-invitation=acme]");
        await row.waitFor();
        expect(await row.innerText()).toContain("invited you to acme as member");
        await row.getByRole("button", { name: "Accept" }).click();
        await row.waitFor({ state: "detached" });
        const switcher = page.getByLabel("Workspace");
        await switcher.waitFor();
        expect(await switcher.locator("option").allInnerTexts()).toContain("acme");
      });
    } finally {
      await context.close();
    }
  });
});
