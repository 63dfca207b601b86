// The web application in real headless Chromium against a real server: first-run setup, sign in and out,
// a wrong password, keys created in the panel and used with curl, revocation, invitations, member removal
// stopping keys, and forged cross-site requests refused.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import type { RunningServer } from "../src/server";
import { launchBrowser, newPage, shot, startEmptyServer } from "./helpers/browser";

setDefaultTimeout(30_000);

let server: RunningServer;
let browser: Browser;
let owner: Page;
const PASSWORD = "owner password 123";

async function curlStatus(path: string, key: string): Promise<string> {
  const p = Bun.spawn(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", `Authorization: Bearer ${key}`, `${server.url}/api/v1/ops${path}`]);
  return (await new Response(p.stdout).text()).trim();
}

async function createKeyInPanel(page: Page, name: string): Promise<string> {
  await page.goto(`${server.url}/#/settings/keys`);
  await page.getByLabel("Key name").fill(name);
  await page.getByRole("button", { name: "Create key" }).click();
  const box = page.getByTestId("new-key");
  await box.waitFor();
  expect(await box.innerText()).toContain("cannot be shown again");
  return (await box.locator("code").innerText()).trim();
}

beforeAll(async () => {
  server = await startEmptyServer();
  browser = await launchBrowser();
  owner = (await newPage(browser)).page;
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test("first run: the setup page creates the workspace and its owner, then is gone", async () => {
  await owner.goto(server.url);
  await owner.getByRole("heading", { name: "Set up svc" }).waitFor();
  await owner.getByLabel("Workspace name").fill("Acme QA");
  await owner.getByLabel("Your name").fill("Olga Owner");
  await owner.getByLabel("Email").fill("olga@acme.test");
  await owner.getByLabel("Password").fill(PASSWORD);
  await shot(owner, "setup");
  await owner.getByRole("button", { name: "Create workspace" }).click();
  await owner.getByRole("heading", { name: "Dashboard" }).waitFor();
  expect(await owner.locator(".who-name").innerText()).toContain("Acme QA");

  const other = (await newPage(browser)).page;
  await other.goto(server.url);
  await other.getByRole("heading", { name: "Sign in" }).waitFor();
  expect(await other.getByText("Set up svc").count()).toBe(0);
  await other.context().close();
});

test("sign out, a wrong password shows a message, the right one signs in", async () => {
  await owner.getByRole("button", { name: "Sign out" }).click();
  await owner.getByRole("heading", { name: "Sign in" }).waitFor();
  await owner.getByLabel("Email").fill("olga@acme.test");
  await owner.getByLabel("Password").fill("not my password");
  await owner.getByRole("button", { name: "Sign in" }).click();
  const alert = owner.getByRole("alert");
  await alert.waitFor();
  expect(await alert.innerText()).toContain("wrong email or password");
  await shot(owner, "login-wrong-password");
  await owner.getByLabel("Password").fill(PASSWORD);
  await owner.getByRole("button", { name: "Sign in" }).click();
  await owner.getByRole("heading", { name: "Dashboard" }).waitFor();
});

test("a key created in the settings panel works with curl until it is revoked there", async () => {
  const key = await createKeyInPanel(owner, "laptop");
  expect(key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
  const row = owner.locator("tr", { hasText: "laptop" });
  expect(await row.innerText()).toContain(`${key.slice(0, 12)}…`);
  expect(await owner.getByText(`curl -fsSL ${server.url}/install.sh | sh`).count()).toBe(1);
  expect(await owner.getByText("npm install -g bun svc-cli").count()).toBe(1);
  expect(await owner.getByText('"mcpServers"').count()).toBe(1);
  await shot(owner, "keys-created");
  expect(await curlStatus("/me", key)).toBe("200");

  await owner.getByRole("button", { name: "I have stored it" }).click();
  expect(await owner.getByText(key).count()).toBe(0);
  await row.getByRole("button", { name: "Revoke" }).click();
  await row.getByRole("button", { name: "Yes, revoke" }).click();
  await row.getByText("revoked").waitFor();
  expect(await curlStatus("/me", key)).toBe("401");
});

test("an invited member sets a password, and removing them stops their key at once", async () => {
  await owner.goto(`${server.url}/#/members`);
  await owner.getByLabel("Email").fill("mia@acme.test");
  await owner.getByLabel("Name (optional)").fill("Mia Member");
  await owner.getByRole("button", { name: "Add member" }).click();
  const link = (await owner.getByTestId("setup-url").locator("code").innerText()).trim();
  expect(link).toContain("/setup-password?token=");
  await shot(owner, "members");

  const mia = (await newPage(browser)).page;
  await mia.goto(link.replace(/^https?:\/\/[^/]+/, server.url));
  await mia.getByText("Choose a password for mia@acme.test").waitFor();
  await mia.getByLabel("New password").fill("mia password 123");
  await mia.getByRole("button", { name: "Set password and sign in" }).click();
  await mia.getByRole("heading", { name: "Dashboard" }).waitFor();
  expect(await mia.getByRole("link", { name: "Members" }).count()).toBe(0);
  const miaKey = await createKeyInPanel(mia, "mia ci");
  expect(await curlStatus("/projects", miaKey)).toBe("200");

  await owner.reload();
  const row = owner.locator("tr", { hasText: "mia@acme.test" });
  const roleChanged = owner.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes("/members/"));
  await row.getByLabel("Role of mia@acme.test").selectOption("admin");
  expect((await roleChanged).status()).toBe(200);
  const roles = await owner.evaluate(async () => ((await (await fetch("/api/v1/ops/members")).json()) as { data: { email: string; role: string }[] }).data);
  expect(roles.find((m) => m.email === "mia@acme.test")?.role).toBe("admin");
  await row.getByRole("button", { name: "Remove" }).click();
  await row.getByRole("button", { name: "Yes, remove" }).click();
  await row.waitFor({ state: "detached" });
  expect(await curlStatus("/projects", miaKey)).toBe("401");
  await mia.reload();
  await mia.getByRole("heading", { name: "Sign in" }).waitFor();
  await mia.context().close();
});

test("forged state-changing requests are refused: without the CSRF token, and from another site", async () => {
  await owner.goto(`${server.url}/#/`);
  const sameOriginNoToken = await owner.evaluate(async () => {
    const r = await fetch("/api/v1/ops/projects", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Forged 1" }),
    });
    return { status: r.status, body: await r.json() };
  });
  expect(sameOriginNoToken.status).toBe(403);
  expect(sameOriginNoToken.body.error).toBe("forbidden");

  // Another origin (same host, other port: same site, so the Lax cookie IS sent) tries a form post and a fetch.
  const target = `${server.url}/api/v1/ops/projects`;
  const evil = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response(
        `<!doctype html><form id="f" method="POST" action="${target}" enctype="text/plain"><input name='{"name":"Forged 2","x":"' value='"}'></form>
<script>fetch(${JSON.stringify(target)}, {method: "POST", mode: "no-cors", credentials: "include", headers: {"content-type": "application/json"}, body: JSON.stringify({name: "Forged 3"})}).finally(() => { document.title = "sent"; document.getElementById("f").submit(); });</script>`,
        { headers: { "content-type": "text/html" } },
      ),
  });
  try {
    const attacker = await owner.context().newPage();
    const statuses: number[] = [];
    attacker.on("response", (r) => {
      if (r.url() === target) statuses.push(r.status());
    });
    await attacker.goto(`http://127.0.0.1:${evil.port}/`);
    await attacker.waitForURL(target);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((x) => x >= 400)).toBe(true);
    await attacker.close();
  } finally {
    evil.stop(true);
  }
  const names = await owner.evaluate(async () =>
    ((await (await fetch("/api/v1/ops/projects")).json()) as { data: { name: string }[] }).data.map((p) => p.name),
  );
  expect(names.filter((n) => n.startsWith("Forged"))).toEqual([]);
});

test("a person in two workspaces switches between them from the top bar", async () => {
  const { createUserInWorkspace } = await import("../src/core/access/users");
  await createUserInWorkspace(server.core.db, { email: "olga@acme.test", name: "Olga Owner", workspace: "globex", role: "member" });
  await owner.goto(`${server.url}/#/projects`);
  await owner.reload();
  await owner.getByLabel("Project name").fill("Acme web shop");
  await owner.getByRole("button", { name: "Create project" }).click();
  await owner.waitForURL(/#\/p\/acme-web-shop$/);
  const switcher = owner.getByLabel("Workspace");
  await switcher.waitFor();
  expect(await switcher.locator("option").allInnerTexts()).toEqual(["Acme QA", "globex"]);
  await shot(owner, "workspace-switcher");
  await switcher.selectOption({ label: "globex" });
  await owner.getByRole("heading", { name: "Dashboard" }).waitFor();
  await owner.waitForFunction(async () => ((await (await fetch("/api/v1/ops/me")).json()) as { workspace: { slug: string } }).workspace.slug === "globex");
  // A member in globex: the Members link goes once the page has the new session (it re-renders after the
  // server has switched), and none of Acme's projects are listed.
  await owner.getByRole("link", { name: "Members" }).waitFor({ state: "detached" });
  const names = await owner.evaluate(async () =>
    ((await (await fetch("/api/v1/ops/projects")).json()) as { data: { name: string }[] }).data.map((p) => p.name),
  );
  expect(names).toEqual([]);
  await owner.getByLabel("Workspace").selectOption({ label: "Acme QA" });
  await owner.getByRole("link", { name: "Members" }).waitFor();
  await owner.goto(`${server.url}/#/projects`);
  await owner.getByRole("link", { name: "Acme web shop" }).waitFor();
});
