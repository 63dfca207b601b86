// In headless Chromium against a real server: a save from a stale tab is refused (If-Match), the page shows what
// the other change did and lets the person reload or overwrite; "Re-run failed" on a group run runs only its failures.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { explained, launchBrowser, signInAsOwner, watch } from "./helpers/browser";
import { createAutomation, json, projectWithEnv } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let browser: Browser;
let context: BrowserContext;

/** Waits until `read` gives `want` (10 s at most), then checks it. */
async function eventually(read: () => Promise<string>, want: string): Promise<void> {
  let got = await read();
  for (let i = 0; i < 200 && got !== want; i++) {
    await Bun.sleep(50);
    got = await read();
  }
  expect(got).toBe(want);
}

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false } });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1, locale: "en-US", timezoneId: "UTC" });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await target?.stop();
});

test("a stale tab's save is refused and shows what changed; Overwrite saves over it, Reload shows the other edit", async () => {
  const { project } = await projectWithEnv(s, "Stale", { BASE_URL: target.url });
  const id = await createAutomation(s, project, { name: "edited twice", kind: "http", steps: [{ request: { url: "/health" } }] });
  const tabA = await context.newPage();
  tabA.setDefaultTimeout(10_000);
  watch(tabA);
  await signInAsOwner(tabA, s.url);
  const tabB = await context.newPage();
  tabB.setDefaultTimeout(10_000);
  watch(tabB);
  await explained(tabB, "stale-edit", async () => {
    for (const tab of [tabA, tabB]) {
      await tab.goto(`${s.url}/#/p/${project}/automations/${id}`);
      await tab.getByLabel("Description").waitFor();
    }
    await tabA.getByLabel("Description").fill("from tab A");
    await tabA.getByRole("button", { name: "Save automation" }).click();
    await eventually(
      async () => (await json<{ description: string }>(await s.call("GET", `/projects/${project}/automations/${id}`))).description,
      "from tab A",
    );

    await tabB.getByLabel("Description").fill("from tab B");
    await tabB.getByRole("button", { name: "Save automation" }).click();
    const dialog = tabB.getByRole("alertdialog");
    await dialog.getByText("This automation was changed by someone else since you opened it").waitFor();
    expect(await tabB.getByTestId("stale-changes").innerText()).toContain("description is now from tab A");
    // Nothing was overwritten yet.
    expect((await json<{ description: string }>(await s.call("GET", `/projects/${project}/automations/${id}`))).description).toBe("from tab A");
    await dialog.getByRole("button", { name: "Overwrite with my edits" }).click();
    await eventually(
      async () => (await json<{ description: string }>(await s.call("GET", `/projects/${project}/automations/${id}`))).description,
      "from tab B",
    );
    await dialog.waitFor({ state: "detached" });

    // Tab A is stale now: Reload drops its edit and shows tab B's.
    await tabA.getByLabel("Description").fill("from tab A again");
    await tabA.getByRole("button", { name: "Save automation" }).click();
    await tabA.getByRole("alertdialog").getByRole("button", { name: "Reload (discard my edits)" }).click();
    await eventually(() => tabA.getByLabel("Description").inputValue(), "from tab B");
    expect((await json<{ description: string }>(await s.call("GET", `/projects/${project}/automations/${id}`))).description).toBe("from tab B");
  });
});

test("Re-run failed on a finished group run starts a group run of only its failed runs", async () => {
  const { project, envId } = await projectWithEnv(s, "Rerun", { BASE_URL: target.url });
  const ok = await createAutomation(s, project, { name: "passes", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
  const bad = await createAutomation(s, project, {
    name: "fails",
    kind: "http",
    environment: envId,
    steps: [{ request: { url: "/status?code=500" }, expect: [{ status: 200 }] }],
  });
  await json(await s.call("POST", `/projects/${project}/groups`, { name: "mixed", automation_ids: [ok, bad] }), 201);
  const first = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/mixed/run`, {}), 202);
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  watch(page);
  await page.goto(`${s.url}/#/p/${project}/group-runs/${first.id}`);
  await page.getByTestId("group-run-status").getByText("failed").waitFor();
  await page.getByRole("button", { name: "Re-run failed" }).click();
  await page.waitForURL((u) => u.hash.includes("/group-runs/grn_") && !u.hash.endsWith(first.id));
  const nextId = page.url().split("/group-runs/")[1] ?? "";
  const next = await json<{ runs: { automation_id: string }[]; trigger: string }>(await s.call("GET", `/projects/${project}/group-runs/${nextId}`));
  expect(next.runs.map((r) => r.automation_id)).toEqual([bad]);
  expect(next.trigger).toBe("web");
});

/**
 * Two tabs of one new browser context (a context of its own, signed in here as `email` whichever tests ran
 * before), each opened at `path` and showing `ready`.
 */
async function twoTabs(path: string, ready: (tab: Page) => Locator, email?: string) {
  const own = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US", timezoneId: "UTC" });
  const tabA = await own.newPage();
  const tabB = await own.newPage();
  await signInAsOwner(tabA, s.url, email);
  for (const tab of [tabA, tabB]) {
    tab.setDefaultTimeout(20_000);
    watch(tab);
    await tab.goto(`${s.url}/#${path}`);
    await ready(tab).waitFor();
  }
  return { own, tabA, tabB };
}

test("environments: a stale tab's save opens the same dialog (never a bare error); Overwrite saves over the other edit", async () => {
  const { project } = await projectWithEnv(s, "Stale env", { BASE_URL: target.url });
  const { own, tabA, tabB } = await twoTabs(`/p/${project}/environments`, (tab) => tab.getByLabel("Variables").first());
  const variables = async () =>
    JSON.stringify(
      (await json<{ data: { variables: Record<string, string> }[] }>(await s.call("GET", `/projects/${project}/environments`))).data[0]?.variables,
    );
  await tabA.getByLabel("Variables").first().fill(`BASE_URL=${target.url}\nFROM=a`);
  await tabA.getByRole("button", { name: "Save environment" }).click();
  await eventually(variables, JSON.stringify({ BASE_URL: target.url, FROM: "a" }));

  await explained(tabB, "stale-env-overwrite", async () => {
    await tabB.getByLabel("Variables").first().fill(`BASE_URL=${target.url}\nFROM=b`);
    await tabB.getByRole("button", { name: "Save environment" }).click();
    const dialog = tabB.getByRole("alertdialog");
    await dialog.getByText("This environment was changed by someone else since you opened it").waitFor();
    expect(await tabB.getByTestId("stale-changes").innerText()).toContain('variables is now {"BASE_URL"');
    expect(await variables()).toBe(JSON.stringify({ BASE_URL: target.url, FROM: "a" }));
    // The refused save has ended (its button is enabled again) before the edits are saved over the other ones.
    await tabB.locator("button:has-text('Save environment'):enabled").waitFor();
    await dialog.getByRole("button", { name: "Overwrite with my edits" }).click();
    await dialog.waitFor({ state: "detached" });
    await eventually(variables, JSON.stringify({ BASE_URL: target.url, FROM: "b" }));
  });
  await own.close();
});

test("members: a stale tab's role change opens the dialog; Overwrite saves over it; a stale removal asks for a reload and removes nothing", async () => {
  const bob = await s.userWithKey("bob@acme.test", "acme", "member");
  const role = async () => (await json<{ role: string }>(await s.call("GET", `/members/${bob.userId}`))).role;
  const { own, tabA, tabB } = await twoTabs("/members", (tab) => tab.getByLabel("Role of bob@acme.test"));
  await tabA.getByLabel("Role of bob@acme.test").selectOption("admin");
  await eventually(role, "admin");

  // Tab B still shows bob as a member: its change is refused and the dialog says what the other one did.
  await tabB.getByLabel("Role of bob@acme.test").selectOption("owner");
  const dialog = tabB.getByRole("alertdialog");
  await dialog.getByText("This member bob@acme.test was changed by someone else since you opened it").waitFor();
  expect(await dialog.getByTestId("stale-changes").innerText()).toContain("role is now admin");
  expect(await role()).toBe("admin");
  await dialog.getByRole("button", { name: "Overwrite with my edits" }).click();
  await eventually(role, "owner");
  await dialog.waitFor({ state: "detached" });

  // Tab A is stale now: removing bob is refused with a reload; after it, the page shows bob as an owner.
  await tabA.locator("tr[data-member='bob@acme.test']").getByRole("button", { name: "Remove" }).click();
  await tabA.getByRole("button", { name: "Yes, remove" }).click();
  const notice = tabA.getByRole("alertdialog");
  await notice.getByText("This member bob@acme.test was changed elsewhere since you opened this page: reload it before you remove it").waitFor();
  expect(await notice.getByTestId("stale-changes").innerText()).toContain("role is now owner");
  expect(await role()).toBe("owner");
  await notice.getByRole("button", { name: "Reload" }).click();
  await notice.waitFor({ state: "detached" });
  await eventually(() => tabA.getByLabel("Role of bob@acme.test").inputValue(), "owner");
  await own.close();
});

test("members: a role change the server refuses shows its reason and puts the stored role back in the list", async () => {
  await s.userWithKey("dana@acme.test", "acme", "admin");
  const { own, tabA } = await twoTabs("/members", (tab) => tab.getByLabel("Role of owner@acme.test"), "dana@acme.test");
  const refused = tabA.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes("/members/"));
  await tabA.getByLabel("Role of owner@acme.test").selectOption("member");
  expect((await refused).status()).toBe(403);
  // Said under the member's own row, not in the card for adding members.
  await tabA.locator("tr[data-member='owner@acme.test'] + tr").getByText("only owners can grant or take the owner role").waitFor();
  await eventually(() => tabA.getByLabel("Role of owner@acme.test").inputValue(), "owner");
  expect((await json<{ data: { email: string; role: string }[] }>(await s.call("GET", "/members"))).data.find((m) => m.email === "owner@acme.test")?.role).toBe(
    "owner",
  );
  await own.close();
});

test("keys: revoking a key from a stale tab says it changed elsewhere and asks for a reload", async () => {
  const carol = await s.userWithKey("carol@acme.test", "acme", "member");
  const { own, tabA, tabB } = await twoTabs(
    "/settings/keys",
    (tab) => tab.locator(`tr[data-key-id='${carol.keyId}']`).getByRole("button", { name: "Revoke" }),
    "carol@acme.test",
  );
  const revokeIn = async (tab: typeof tabA) => {
    await tab.locator(`tr[data-key-id='${carol.keyId}']`).getByRole("button", { name: "Revoke" }).click();
    await tab.getByRole("button", { name: "Yes, revoke" }).click();
  };
  await revokeIn(tabA);
  await eventually(async () => String((await s.call("GET", "/me", undefined, carol.key)).status), "401");
  await tabA.locator(`tr[data-key-id='${carol.keyId}']`).getByText("revoked").waitFor();

  // Tab B still shows the key active: its revoke is refused as stale, with the change named and a reload.
  await revokeIn(tabB);
  const notice = tabB.getByRole("alertdialog");
  await notice.getByText(`This key key of carol@acme.test was changed elsewhere since you opened this page: reload it before you revoke it`).waitFor();
  expect(await notice.getByTestId("stale-changes").innerText()).toContain("revoked_at is now");
  await notice.getByRole("button", { name: "Reload" }).click();
  await notice.waitFor({ state: "detached" });
  await tabB.locator(`tr[data-key-id='${carol.keyId}']`).getByText("revoked").waitFor();
  await own.close();
});

test("pending invitations: Cancel is sent from the version shown (If-Match) and cancels it", async () => {
  await s.userWithKey("dave@elsewhere.test", "elsewhere", "owner");
  const { invitation_id } = await json<{ invitation_id: string }>(await s.call("POST", "/members", { email: "dave@elsewhere.test" }), 201);
  const tag = (await s.call("GET", `/members/invitations/${invitation_id}`)).headers.get("etag");
  const own = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US", timezoneId: "UTC" });
  const page = await own.newPage();
  page.setDefaultTimeout(20_000);
  watch(page);
  await signInAsOwner(page, s.url);
  await page.goto(`${s.url}/#/members`);
  const sent = page.waitForRequest((r) => r.method() === "DELETE" && r.url().endsWith(`/members/invitations/${invitation_id}`));
  await page.getByRole("button", { name: "Cancel the invitation of dave@elsewhere.test" }).click();
  expect((await sent).headers()["if-match"]).toBe(tag ?? "no tag");
  await page.locator("tr[data-pending-invitation='dave@elsewhere.test']").waitFor({ state: "detached" });
  expect((await s.call("GET", `/members/invitations/${invitation_id}`)).status).toBe(404);
  await own.close();
});
