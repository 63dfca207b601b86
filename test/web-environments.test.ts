// The Environments page in headless Chromium against a real server: a secret removed by name after a confirmation
// (the API's null), the others kept; the runner labels an environment's runs need, shown and edited by an owner, and
// shown to a member on a protected environment they cannot change.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { waitUntilAsync } from "./helpers/wait";
import { expectValue, explained, launchBrowser, newPage, shot, signInAsOwner } from "./helpers/browser";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

interface Env {
  secret_names: string[];
  runner_labels: string[];
  variables: Record<string, string>;
}

let s: TestServer;
let browser: Browser;
const contexts: BrowserContext[] = [];

const env = async (name: string) => json<Env>(await s.call("GET", `/projects/shop/environments/${name}`));
/** The card of one environment on the page (its heading is the environment's name, then any badge). */
const card = (page: Page, name: string) => page.locator(".card", { has: page.locator("h2", { hasText: new RegExp(`^${name}( |$)`) }) });

async function signedIn(email: string): Promise<Page> {
  const { context, page } = await newPage(browser);
  contexts.push(context);
  await signInAsOwner(page, s.url, email);
  return page;
}

beforeAll(async () => {
  s = await startTestServer();
  await s.userWithKey("member@acme.test", "acme", "member");
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(
    await s.call("POST", "/projects/shop/environments", {
      name: "staging",
      variables: { BASE_URL: "https://staging.example.com" },
      secrets: { TOKEN: "s3cret-token", PASSWORD: "s3cret-password" },
    }),
    201,
  );
  browser = await launchBrowser();
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await s?.stop();
});

test("a secret is removed by its name after a confirmation; the other secrets stay", async () => {
  const page = await signedIn("owner@acme.test");
  await explained(page, "env-secret-remove", async () => {
    await page.goto(`${s.url}/#/p/shop/environments`);
    const staging = card(page, "staging");
    await staging.getByRole("button", { name: "Remove secret TOKEN" }).click();
    const asked = staging.getByRole("group", { name: "Remove secret TOKEN from staging?" });
    // Cancel first: nothing is removed.
    await asked.getByRole("button", { name: "Cancel" }).click();
    expect((await env("staging")).secret_names.sort()).toEqual(["PASSWORD", "TOKEN"]);
    await staging.getByRole("button", { name: "Remove secret TOKEN" }).click();
    await shot(page, "env-secret-remove-asked");
    await asked.getByRole("button", { name: "Yes, remove" }).click();
    await staging.locator("[data-secret='TOKEN']").waitFor({ state: "detached" });
    await staging.locator("[data-secret='PASSWORD']").waitFor();
    const after = await env("staging");
    expect(after.secret_names).toEqual(["PASSWORD"]);
    expect(after.variables).toEqual({ BASE_URL: "https://staging.example.com" });
  });
});

test("an environment's runner labels are shown and an owner edits them; a member sees them on a protected one", async () => {
  const page = await signedIn("owner@acme.test");
  await explained(page, "env-runner-labels", async () => {
    await json(await s.call("PATCH", "/projects/shop/environments/staging", { runner_labels: ["linux", "eu"] }));
    await page.goto(`${s.url}/#/p/shop/environments`);
    const staging = card(page, "staging");
    const labels = staging.getByLabel("Runner labels");
    expect(await labels.inputValue()).toBe("eu linux");
    await labels.fill("gpu, eu-west");
    await staging.getByRole("button", { name: "Save environment" }).click();
    // A save goes through the browser, the stale-version check and the server: seconds on a busy machine.
    if (!(await waitUntilAsync(async () => (await env("staging")).runner_labels.join() === "eu-west,gpu", 20_000)))
      throw new Error(`the labels were not saved: ${(await env("staging")).runner_labels}`);
    // The saved form is shown afresh (the labels as stored) before it is edited again: an edit typed while the
    // save's answer was still on its way would be replaced by that fresh form.
    await expectValue(card(page, "staging").getByLabel("Runner labels"), "eu-west gpu");
    // Emptied: any runner (or the server itself) may run it.
    await card(page, "staging").getByLabel("Runner labels").fill("");
    await card(page, "staging").getByRole("button", { name: "Save environment" }).click();
    if (!(await waitUntilAsync(async () => (await env("staging")).runner_labels.length === 0, 20_000))) throw new Error("the labels were not emptied");
    await shot(page, "env-runner-labels");
  });
  await json(await s.call("POST", "/projects/shop/environments", { name: "production", protected: true, runner_labels: ["prod-runner"] }), 201);
  const member = await signedIn("member@acme.test");
  await explained(member, "env-runner-labels-member", async () => {
    await member.goto(`${s.url}/#/p/shop/environments`);
    const production = card(member, "production");
    expect(await production.getByTestId("runner-labels").innerText()).toBe(
      "Runs here: only runners labelled prod-runner (they wait queued until one connects)",
    );
  });
});
