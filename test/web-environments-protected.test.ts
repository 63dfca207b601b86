// Protected environments in the web application, in headless Chromium against a real server: an owner marks one
// protected with its allowed hosts (on creation and on an existing one), a host the API refuses is shown at the
// field and saves nothing, a refused secret is said once, a member sees a protected environment read-only, and a member's run or group run in
// one shows the API's 403 message and queues nothing.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner } from "./helpers/browser";
import { createAutomation, json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

interface Env {
  id: string;
  name: string;
  protected: boolean;
  allowed_hosts: string[] | null;
  variables: Record<string, string>;
  secret_names: string[];
}

let s: TestServer;
let browser: Browser;
const contexts: BrowserContext[] = [];

const envs = async () => (await json<{ data: Env[] }>(await s.call("GET", "/projects/shop/environments?limit=200"))).data;
const env = async (name: string) => json<Env>(await s.call("GET", `/projects/shop/environments/${name}`));

async function signedIn(email: string): Promise<Page> {
  const { context, page } = await newPage(browser);
  contexts.push(context);
  await signInAsOwner(page, s.url, email);
  return page;
}

/** The card of one environment on the page (its heading is the environment's name, then any badge). */
const card = (page: Page, name: string) => page.locator(".card", { has: page.locator("h2", { hasText: new RegExp(`^${name}( |$)`) }) });
const createCard = (page: Page) => card(page, "New environment");

beforeAll(async () => {
  s = await startTestServer();
  await s.userWithKey("member@acme.test", "acme", "member");
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "staging", variables: { BASE_URL: "https://staging.example.com" } }), 201);
  browser = await launchBrowser();
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await s?.stop();
});

describe("an owner", () => {
  let page: Page;
  beforeAll(async () => {
    page = await signedIn("owner@acme.test");
  });

  test("creates a protected environment with allowed hosts and sees it saved", () =>
    explained(page, "env-protected-create", async () => {
      await page.goto(`${s.url}/#/p/shop/environments`);
      const form = createCard(page);
      await form.getByLabel("Environment name").fill("prod");
      await form.getByLabel("Protected", { exact: true }).check();
      await form.getByLabel("Allowed hosts").fill("api.example.com\nAuth.Example.com, 10.0.0.5");
      await form.getByRole("button", { name: "Create environment" }).click();

      const prod = card(page, "prod");
      await prod.locator(".badge", { hasText: "protected" }).waitFor();
      await prod.getByTestId("allowed-hosts").getByText("api.example.com, auth.example.com, 10.0.0.5", { exact: true }).waitFor();
      expect(await card(page, "staging").locator(".badge", { hasText: "protected" }).count()).toBe(0);
      expect(await env("prod")).toMatchObject({ protected: true, allowed_hosts: ["api.example.com", "auth.example.com", "10.0.0.5"] });
      // What the owner sees in the editor is what was saved.
      expect(await prod.getByLabel("Protected", { exact: true }).isChecked()).toBe(true);
      expect(await prod.getByLabel("Allowed hosts").inputValue()).toBe("api.example.com\nauth.example.com\n10.0.0.5");
      await shot(page, "environments-protected-owner");
    }));

  test("protects an existing environment; empty allowed hosts mean the host of BASE_URL", () =>
    explained(page, "env-protected-edit", async () => {
      await page.goto(`${s.url}/#/p/shop/environments`);
      const staging = card(page, "staging");
      await staging.getByLabel("Protected", { exact: true }).check();
      await staging.getByRole("button", { name: "Save environment" }).click();
      await card(page, "staging").locator(".badge", { hasText: "protected" }).waitFor();
      await card(page, "staging").getByTestId("allowed-hosts").filter({ hasText: "the host of BASE_URL (staging.example.com)" }).waitFor();
      expect(await env("staging")).toMatchObject({ protected: true, allowed_hosts: null });

      // Hosts set, then cleared again: back to the default.
      await card(page, "staging").getByLabel("Allowed hosts").fill("staging-api.example.com");
      await card(page, "staging").getByRole("button", { name: "Save environment" }).click();
      await card(page, "staging").getByTestId("allowed-hosts").getByText("staging-api.example.com", { exact: true }).waitFor();
      expect((await env("staging")).allowed_hosts).toEqual(["staging-api.example.com"]);
      await card(page, "staging").getByLabel("Allowed hosts").fill("");
      await card(page, "staging").getByRole("button", { name: "Save environment" }).click();
      await card(page, "staging").getByTestId("allowed-hosts").filter({ hasText: "the host of BASE_URL (staging.example.com)" }).waitFor();
      expect((await env("staging")).allowed_hosts).toBeNull();
    }));

  test("a URL for a host shows the API's 400 at the field and saves nothing", () =>
    explained(page, "env-protected-bad-host", async () => {
      await page.goto(`${s.url}/#/p/shop/environments`);
      const before = await envs();

      // On creation: no environment is made.
      const form = createCard(page);
      await form.getByLabel("Environment name").fill("qa");
      await form.getByLabel("Protected", { exact: true }).check();
      await form.getByLabel("Allowed hosts").fill("ok.example.com\nhttps://api.example.com/x");
      await form.getByRole("button", { name: "Create environment" }).click();
      const atField = form.getByTestId("allowed-hosts-problems");
      await atField.waitFor();
      expect(await atField.innerText()).toContain("https://api.example.com/x: a host name like api.example.com or an IP address, without scheme, port or path");
      expect(await form.getByLabel("Allowed hosts").getAttribute("aria-invalid")).toBe("true");
      await form.getByRole("alert").filter({ hasText: "the request body is not valid" }).waitFor();

      // On an existing environment: it keeps what it had.
      const prod = card(page, "prod");
      await prod.getByLabel("Allowed hosts").fill("api.example.com:8443");
      await prod.getByRole("button", { name: "Save environment" }).click();
      await prod.getByTestId("allowed-hosts-problems").getByText("api.example.com:8443: a host name like api.example.com").waitFor();
      await shot(page, "environments-protected-bad-host");
      expect(await envs()).toEqual(before);
    }));

  test("a refused secret is said once, and another refused with it is listed under it by its field", () =>
    explained(page, "env-secret-too-short", async () => {
      await json(await s.call("POST", "/projects/shop/environments", { name: "dev", variables: { BASE_URL: "https://dev.example.com" } }), 201);
      // Made through the API: the page (open since the test before) is loaded again to show it.
      await page.goto(`${s.url}/#/p/shop/environments`);
      await page.reload();
      const dev = card(page, "dev");
      const tooShort = "too short to mask safely: a secret needs at least 8 characters";
      await dev.getByLabel("Set secrets").fill("TOKEN=abc");
      await dev.getByRole("button", { name: "Save environment" }).click();
      const alert = dev.getByRole("alert");
      await alert.waitFor();
      expect(await alert.innerText()).toBe(`the request body is not valid: body.secrets.TOKEN: ${tooShort}`);

      await dev.getByLabel("Set secrets").fill("TOKEN=abc\nOTHER=xy");
      await dev.getByRole("button", { name: "Save environment" }).click();
      await alert.locator("ul.details").waitFor();
      expect(await alert.locator("ul.details li").allInnerTexts()).toEqual([`secrets.OTHER: ${tooShort}`]);
      expect((await alert.innerText()).split(tooShort).length - 1).toBe(2);
      expect((await env("dev")).secret_names).toEqual([]);
    }));
});

describe("a member", () => {
  let page: Page;
  let automation: string;
  let group: string;
  beforeAll(async () => {
    if ((await s.call("GET", "/projects/shop/environments/prod")).status === 404) {
      await json(
        await s.call("POST", "/projects/shop/environments", {
          name: "prod",
          variables: { BASE_URL: "https://shop.example.com" },
          protected: true,
          allowed_hosts: ["api.example.com"],
        }),
        201,
      );
    }
    await json(await s.call("POST", "/projects/shop/environments", { name: "sandbox", variables: { BASE_URL: "https://sandbox.example.com" } }), 201);
    const prod = await env("prod");
    automation = await createAutomation(s, "shop", { name: "items answer", kind: "http", status: "active", steps: [{ request: { url: "/items" } }] });
    const inProd = await createAutomation(s, "shop", {
      name: "prod smoke",
      kind: "http",
      status: "active",
      environment: prod.id,
      steps: [{ request: { url: "/items" } }],
    });
    group = (await json<{ id: string }>(await s.call("POST", "/projects/shop/groups", { name: "smoke", automation_ids: [inProd] }), 201)).id;
    page = await signedIn("member@acme.test");
  });

  test("sees a protected environment read-only, with the reason, and can still change an unprotected one", () =>
    explained(page, "env-protected-member", async () => {
      await page.goto(`${s.url}/#/p/shop/environments`);
      const prod = card(page, "prod");
      await prod.locator(".badge", { hasText: "protected" }).waitFor();
      await prod.getByText("protected: only owners and admins can change it").waitFor();
      await prod.getByTestId("allowed-hosts").filter({ hasText: "api.example.com" }).waitFor();
      expect(await prod.getByRole("button").count()).toBe(0);
      expect(await prod.locator("textarea:not([readonly]), input:not([readonly])").count()).toBe(0);
      // Nor may a member protect anything: no such control for them.
      expect(await page.getByLabel("Protected", { exact: true }).count()).toBe(0);
      await shot(page, "environments-protected-member");

      const sandbox = card(page, "sandbox");
      await sandbox.getByLabel("Variables").fill("BASE_URL=https://sandbox.example.com\nLANG=en");
      const saved = page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes("/environments/"));
      await sandbox.getByRole("button", { name: "Save environment" }).click();
      expect((await saved).status()).toBe(200);
      expect((await env("sandbox")).variables).toEqual({ BASE_URL: "https://sandbox.example.com", LANG: "en" });
    }));

  test("starting a run or a group run in a protected environment shows the API's 403 message and queues nothing", () =>
    explained(page, "env-protected-member-run", async () => {
      await page.goto(`${s.url}/#/p/shop/automations/${automation}`);
      const prodId = (await env("prod")).id;
      const select = page.locator("label.field", { has: page.locator(".field-label", { hasText: /^Environment$/ }) }).locator("select");
      await select.locator(`option[value="${prodId}"]`).waitFor({ state: "attached" });
      await select.selectOption(prodId);
      expect(await select.locator(`option[value="${prodId}"]`).innerText()).toBe("prod (protected)");
      await page.getByRole("button", { name: "Run now" }).click();
      await page.getByRole("alert").filter({ hasText: 'the environment "prod" is protected: only owners and admins can start runs in it' }).waitFor();
      await shot(page, "automation-run-protected-member");

      await page.goto(`${s.url}/#/p/shop/groups/${group}`);
      await page.getByRole("button", { name: "Run group" }).click();
      await page.getByRole("alert").filter({ hasText: 'the environment "prod" is protected: only owners and admins can start runs in it' }).waitFor();

      expect((await json<{ data: unknown[] }>(await s.call("GET", "/projects/shop/runs"))).data).toEqual([]);
      expect(page.url()).toContain(`/groups/${group}`);
    }));
});
