// A workspace's owners and admins see the invitations it has sent and cancel a mistaken one, over the API and on
// the members page; a cancelled invitation can no longer be accepted, and another workspace's is not found.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import { explained, launchBrowser, newPage, signInAsOwner } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(30_000);

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
});
afterAll(() => s.stop());

/** Someone with an account in another workspace, invited to acme by acme's owner (or the key given). */
async function invite(email: string, body: Record<string, unknown> = {}, key?: string) {
  const person = await s.userWithKey(email, `home-of-${email.split("@")[0]}`, "owner");
  const res = await s.call("POST", "/members", { email, ...body }, key);
  expect(res.status).toBe(201);
  const inv = (await res.json()) as { status: string; invitation_id: string };
  expect(inv.status).toBe("invited");
  return { person, id: inv.invitation_id };
}

async function pendingIds(key?: string): Promise<string[]> {
  const res = await s.call("GET", "/members/invitations?limit=200", undefined, key);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { id: string }[] }).data.map((i) => i.id);
}

describe("list_workspace_invitations", () => {
  test("an owner sees the pending invitations with the address, the name and role as given, and who invited", async () => {
    const { person, id } = await invite("pat@initech.test", { name: "Pat Given", role: "admin" });
    const res = await s.call("GET", "/members/invitations?limit=200");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Record<string, unknown>[]; next_cursor: string | null };
    expect(body.data.find((i) => i.id === id)).toEqual({
      id,
      email: "pat@initech.test",
      name: "Pat Given",
      role: "admin",
      invited_by: { name: "owner", email: "owner@acme.test" },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // Nothing of the invited account: not its id, not the name it goes by.
    expect(JSON.stringify(body)).not.toContain(person.userId);
  });

  test("an admin sees them too; a member gets 403, and another workspace sees none of them", async () => {
    const { id } = await invite("quinn@initech.test");
    const admin = await s.userWithKey("admin@acme.test", "acme", "admin");
    expect(await pendingIds(admin.key)).toContain(id);

    const member = await s.userWithKey("member@acme.test", "acme", "member");
    const res = await s.call("GET", "/members/invitations", undefined, member.key);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: "forbidden", message: expect.any(String) });

    const globex = await s.userWithKey("boss@globex.test", "globex", "owner");
    expect(await pendingIds(globex.key)).toEqual([]);
  });

  test("pages with a cursor, newest first", async () => {
    const other = await s.userWithKey("paging@umbrella.test", "umbrella", "owner");
    const ids: string[] = [];
    for (const email of ["p1@a.test", "p2@a.test", "p3@a.test"]) ids.push((await invite(email, {}, other.key)).id);
    const first = (await (await s.call("GET", "/members/invitations?limit=2", undefined, other.key)).json()) as { data: { id: string }[]; next_cursor: string };
    expect(first.data.map((i) => i.id)).toEqual(ids.slice(1, 3).reverse());
    const second = (await (await s.call("GET", `/members/invitations?limit=2&cursor=${first.next_cursor}`, undefined, other.key)).json()) as {
      data: { id: string }[];
      next_cursor: string | null;
    };
    expect(second).toEqual({ data: [expect.objectContaining({ id: ids[0] })], next_cursor: null });
  });
});

describe("cancel_invitation", () => {
  test("an owner cancels; it leaves both lists and the invitee can no longer accept it", async () => {
    const { person, id } = await invite("rae@initech.test", { role: "member" });
    expect((await s.call("GET", "/invitations", undefined, person.key).then((r) => r.json())).data.map((i: { id: string }) => i.id)).toEqual([id]);

    expect((await s.call("DELETE", `/members/invitations/${id}`)).status).toBe(204);
    expect(await pendingIds()).not.toContain(id);
    expect((await s.call("GET", "/invitations", undefined, person.key).then((r) => r.json())).data).toEqual([]);
    const accept = await s.call("POST", `/invitations/${id}/accept`, undefined, person.key);
    expect(accept.status).toBe(404);
    expect((await s.call("GET", "/members?limit=200").then((r) => r.json())).data.map((m: { email: string }) => m.email)).not.toContain("rae@initech.test");

    // Cancelled is gone: a second cancel is not found, and the address can be invited again.
    expect((await s.call("DELETE", `/members/invitations/${id}`)).status).toBe(404);
    expect((await s.call("POST", "/members", { email: "rae@initech.test" })).status).toBe(201);
  });

  test("another workspace's invitation is 404 and stays pending", async () => {
    const { id } = await invite("sam@initech.test");
    const globex = await s.userWithKey("admin@globex.test", "globex", "owner");
    const res = await s.call("DELETE", `/members/invitations/${id}`, undefined, globex.key);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: "not_found", message: expect.any(String) });
    expect(await pendingIds()).toContain(id);
  });

  test("a member gets 403 and the invitation stays; an accepted or declined invitation is 404", async () => {
    const { person, id } = await invite("tia@initech.test");
    const member = await s.userWithKey("member2@acme.test", "acme", "member");
    const res = await s.call("DELETE", `/members/invitations/${id}`, undefined, member.key);
    expect(res.status).toBe(403);
    expect((await res.json()).error).toBe("forbidden");
    expect(await pendingIds()).toContain(id);

    expect((await s.call("POST", `/invitations/${id}/accept`, undefined, person.key)).status).toBe(200);
    expect((await s.call("DELETE", `/members/invitations/${id}`)).status).toBe(404);
    const declined = await invite("uma@initech.test");
    expect((await s.call("DELETE", `/invitations/${declined.id}`, undefined, declined.person.key)).status).toBe(204);
    expect((await s.call("DELETE", `/members/invitations/${declined.id}`)).status).toBe(404);
  });

  test("an admin cancels an invitation to member or admin, but one to the owner role only an owner may", async () => {
    const admin = await s.userWithKey("admin3@acme.test", "acme", "admin");
    const asAdmin = await invite("val@initech.test", { role: "admin" });
    expect((await s.call("DELETE", `/members/invitations/${asAdmin.id}`, undefined, admin.key)).status).toBe(204);
    const asOwner = await invite("wes@initech.test", { role: "owner" });
    const res = await s.call("DELETE", `/members/invitations/${asOwner.id}`, undefined, admin.key);
    expect(res.status).toBe(403);
    expect(await pendingIds()).toContain(asOwner.id);
    expect((await s.call("DELETE", `/members/invitations/${asOwner.id}`)).status).toBe(204);
  });
});

describe("on the members page", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(() => browser?.close());

  test("an owner sees pending invitations under the members and cancels one", async () => {
    const { id } = await invite("xena@initech.test", { name: "Xena Given", role: "admin" });
    const { context, page } = await newPage(browser);
    try {
      await explained(page, "members-invitations-cancel", async () => {
        await signInAsOwner(page, s.url);
        await page.goto(`${s.url}/#/members`);
        const row = page.locator('[data-pending-invitation="xena@initech.test"]');
        await row.waitFor();
        const text = await row.innerText();
        expect(text).toContain("Xena Given");
        expect(text).toContain("admin");
        // Under the members: the invitations card comes after the members table.
        const below = await page.evaluate(() => {
          const members = document.querySelector("[data-member]");
          const invitation = document.querySelector("[data-pending-invitation]");
          return !!members && !!invitation && (members.compareDocumentPosition(invitation) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
        });
        expect(below).toBe(true);
        await row.getByRole("button", { name: "Cancel" }).click();
        await row.waitFor({ state: "detached" });
        expect(await pendingIds()).not.toContain(id);

        // Inviting from the form shows the new invitation in the list at once.
        await s.userWithKey("yuri@initech.test", "initech", "owner");
        await page.getByLabel("Email").fill("yuri@initech.test");
        await page.getByRole("button", { name: "Add member" }).click();
        await page.locator('[data-pending-invitation="yuri@initech.test"]').waitFor();
      });
    } finally {
      await context.close();
    }
  });
});
