// The pages of the web application in headless Chromium against a real server: projects (edit, OpenAPI upload,
// delete), environments with write-only secrets, features with Gherkin, automations with the validated steps
// editor and filters, runs, groups and group runs; screenshots of each at 1280 and 390 px, where every table is
// stacked into labelled rows with all its controls (the keys page's Revoke button) on screen.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, BrowserContext, Cookie, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner, replaceEditorText } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(30_000);

let s: TestServer;
let browser: Browser;
let cookies: Cookie[] = [];
let context: BrowserContext | undefined;
let page: Page;
const visited: [string, string][] = [];

async function visit(hash: string, name: string): Promise<void> {
  await page.goto(`${s.url}/#${hash}`);
  visited.push([hash, name]);
}

beforeAll(async () => {
  s = await startTestServer();
  browser = await launchBrowser();
  const signedIn = await newPage(browser);
  await signInAsOwner(signedIn.page, s.url);
  cookies = await signedIn.context.cookies();
  await signedIn.context.close();
});

/** A step of the walk through the pages: in a fresh tab of the signed-in person, so that a page left in a bad state
 * by one step does not spoil the next; a failure says what the page showed. */
function scenario(title: string, name: string, steps: () => Promise<void>): void {
  test(title, async () => {
    await context?.close();
    ({ context, page } = await newPage(browser));
    await context.addCookies(cookies);
    await explained(page, name, steps);
  });
}
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

scenario("projects: create, edit, attach an OpenAPI document, delete with confirmation", "projects", async () => {
  await visit("/projects", "projects");
  await page.getByLabel("Project name").fill("Shop API");
  await page.getByRole("button", { name: "Create project" }).click();
  await page.waitForURL(/#\/p\/shop-api$/);
  await page.getByLabel("Description").fill("The shop's public API");
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByLabel("OpenAPI file").setInputFiles({
    name: "shop.json",
    mimeType: "application/json",
    buffer: Buffer.from(
      JSON.stringify({
        openapi: "3.0.3",
        info: { title: "Shop", version: "1.2" },
        paths: { "/items": { get: { responses: { "200": { description: "ok" } } } } },
      }),
    ),
  });
  await page.getByText("Attached: Shop 1.2").waitFor();
  const p = await (await s.call("GET", "/projects/shop-api")).json();
  expect(p).toMatchObject({ description: "The shop's public API", has_openapi: true });
  visited.push(["/p/shop-api", "project"]);

  await s.call("POST", "/projects", { name: "Throwaway" });
  await page.goto(`${s.url}/#/p/throwaway`);
  await page.getByRole("button", { name: "Delete project" }).click();
  await page.getByRole("button", { name: "Yes, delete project" }).click();
  await page.waitForURL(/#\/projects$/);
  expect((await s.call("GET", "/projects/throwaway")).status).toBe(404);
});

scenario("environments: variables are shown, secrets only by name", "environments", async () => {
  await visit("/p/shop-api/environments", "environments");
  await page.getByLabel("Environment name").fill("staging");
  await page.getByRole("button", { name: "Create environment" }).click();
  const card = page.locator(".card", { hasText: "staging" }).last();
  await card.getByLabel("Variables").fill("BASE_URL=http://127.0.0.1:9\nTIMEOUT=5");
  await card.getByLabel("Set secrets").fill("TOKEN=s3cret-value");
  await card.getByRole("button", { name: "Save environment" }).click();
  await page.locator("code.chip", { hasText: "TOKEN" }).waitFor();
  expect(await page.content()).not.toContain("s3cret-value");
  const env = (await (await s.call("GET", "/projects/shop-api/environments")).json()).data[0];
  expect(env).toMatchObject({ name: "staging", variables: { BASE_URL: "http://127.0.0.1:9", TIMEOUT: "5" }, secret_names: ["TOKEN"] });
});

scenario("features: create and edit with Gherkin acceptance criteria", "features", async () => {
  await visit("/p/shop-api/features", "features");
  await page.getByLabel("Feature name").fill("Items");
  await page.getByRole("button", { name: "Create feature" }).click();
  await page.waitForURL(/#\/p\/shop-api\/features\/fea_/);
  await page.getByLabel("Acceptance criteria").fill("Scenario: list items\n  Given the shop has items\n  When I GET /items\n  Then the status is 200");
  await page.locator(".gherkin .g-step", { hasText: "Given" }).waitFor();
  await page.getByLabel("Target").selectOption("api");
  await page.getByLabel("Paths").fill("/items");
  await page.getByRole("button", { name: "Save feature" }).click();
  await page.getByRole("button", { name: "Generate automations" }).waitFor();
  const id = page.url().split("/").pop() ?? "";
  // The button is there before the save's answer: wait (bounded) for the save to land, then check what it stored.
  const read = async () => (await (await s.call("GET", `/projects/shop-api/features/${id}`)).json()) as { target: unknown };
  let f = await read();
  for (const until = Date.now() + 5_000; f.target === null && Date.now() < until; f = await read()) await Bun.sleep(20);
  expect(f.target).toEqual({ kind: "api", tags: [], paths: ["/items"] });
  visited.push([`/p/shop-api/features/${id}`, "feature"]);
});

scenario("automations: the steps editor shows schema errors inline; create, activate, filter, run", "automations", async () => {
  await visit("/p/shop-api/automations", "automations");
  await page.getByRole("button", { name: "New automation" }).click();
  await page.getByLabel("Name").fill("items list");
  const editor = page.getByRole("textbox", { name: "Steps", exact: true });
  await replaceEditorText(page, editor, '[{"request": {"method": "FETCH", "url": "/items"}}]');
  await page.getByTestId("steps-problems").waitFor();
  expect(await page.getByTestId("steps-problems").innerText()).toContain("steps.0");
  expect(await page.getByRole("button", { name: "Create automation" }).isDisabled()).toBe(true);
  await shot(page, "automation-editor-error");
  await replaceEditorText(page, editor, '[{"name": "list", "request": {"method": "GET", "url": "/items"}, "expect": [{"status": 200}]}]');
  await page.getByTestId("steps-valid").waitFor();
  await page.getByRole("button", { name: "Create automation" }).click();
  await page.waitForURL(/#\/p\/shop-api\/automations\/aut_/);
  const autId = page.url().split("/").pop() ?? "";
  await page.getByRole("button", { name: "Disable" }).click();
  await page.getByRole("button", { name: "Activate" }).waitFor();
  expect((await (await s.call("GET", `/projects/shop-api/automations/${autId}`)).json()).status).toBe("disabled");
  await page.getByRole("button", { name: "Activate" }).click();
  await page.getByRole("button", { name: "Disable" }).waitFor();
  expect((await (await s.call("GET", `/projects/shop-api/automations/${autId}`)).json()).status).toBe("active");
  visited.push([`/p/shop-api/automations/${autId}`, "automation"]);

  await s.call("POST", "/projects/shop-api/automations", { name: "home page", kind: "browser", steps: [{ goto: "/" }], status: "draft" });
  await visit("/p/shop-api/automations", "automations");
  await page.locator("tr[data-automation='home page']").waitFor();
  await page.getByLabel("Status").selectOption("draft");
  await page.locator("tr[data-automation='items list']").waitFor({ state: "detached" });
  await page.locator("tr[data-automation='home page']").waitFor();
  expect(await page.locator("tr[data-automation]").count()).toBe(1);
  await page.getByLabel("Status").selectOption("");
  await page.getByLabel("Search").fill("items");
  await page.locator("tr[data-automation='home page']").waitFor({ state: "detached" });

  await page.goto(`${s.url}/#/p/shop-api/automations/${autId}`);
  await page.getByLabel("Default environment").locator("option", { hasText: "staging" }).waitFor({ state: "attached" });
  await page.getByLabel("Default environment").selectOption({ label: "staging" });
  await page
    .getByLabel(/^Feature/)
    .locator("option", { hasText: "Items" })
    .waitFor({ state: "attached" });
  await page.getByLabel(/^Feature/).selectOption({ label: "Items" });
  const saved = page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes(`/automations/${autId}`));
  await page.getByRole("button", { name: "Save automation" }).click();
  expect((await saved).status()).toBe(200);
  const env = (await (await s.call("GET", "/projects/shop-api/environments")).json()).data[0];
  const updated = await (await s.call("GET", `/projects/shop-api/automations/${autId}`)).json();
  expect(updated.environment_id).toBe(env.id);
  expect(updated.feature_id).toStartWith("fea_");
  await page.getByLabel(/^Environment/).selectOption({ label: "staging" });
  await page.getByRole("button", { name: "Run now" }).click();
  await page.waitForURL(/#\/p\/shop-api\/runs\/run_/);
  await page.getByTestId("run-status").waitFor();
  const runId = page.url().split("/").pop() ?? "";
  const run = await (await s.call("GET", `/projects/shop-api/runs/${runId}`)).json();
  expect(run).toMatchObject({ automation_id: autId, trigger: "web" });
  visited.push([`/p/shop-api/runs/${runId}`, "run"], ["/p/shop-api/runs", "runs"]);
});

scenario("groups: create, order automations, run the group and see its runs together", "groups", async () => {
  await visit("/p/shop-api/groups", "groups");
  await page.getByLabel("Group name").fill("smoke");
  await page.getByRole("button", { name: "Create group" }).click();
  await page.waitForURL(/#\/p\/shop-api\/groups\/grp_/);
  const groupId = page.url().split("/").pop() ?? "";
  for (const name of ["items list", "home page"]) {
    await page.getByLabel("Add automation").selectOption({ label: name });
    await page.getByRole("button", { name: "Add", exact: true }).click();
  }
  // Each button names the automation it moves.
  await page.getByRole("button", { name: "Move home page up" }).click();
  expect(await page.getByRole("button", { name: "Move home page up" }).isDisabled()).toBe(true);
  const saved = page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().includes(`/groups/${groupId}`));
  await page.getByRole("button", { name: "Save group" }).click();
  expect((await saved).status()).toBe(200);
  await page.locator("button:not([disabled])", { hasText: "Run group" }).waitFor();
  const g = await (await s.call("GET", `/projects/shop-api/groups/${groupId}`)).json();
  const names = await Promise.all(
    g.automation_ids.map(async (id: string) => (await (await s.call("GET", `/projects/shop-api/automations/${id}`)).json()).name),
  );
  expect(names).toEqual(["home page", "items list"]);
  visited.push([`/p/shop-api/groups/${groupId}`, "group"]);

  await page.getByRole("button", { name: "Run group" }).click();
  await page.waitForURL(/#\/p\/shop-api\/group-runs\/grn_/);
  await page.getByTestId("group-run-status").waitFor();
  await page.locator("tr[data-run-id]").nth(1).waitFor();
  expect(await page.locator("tr[data-run-id]").count()).toBe(2);
  visited.push([new URL(page.url()).hash.slice(1), "group-run"]);
});

/** At 390 px table rows are stacked cards: every cell is labelled with its column's heading (data-label), and no
 * link, button or field of a table lies outside the viewport (on the keys page: the Revoke button). */
async function narrowTablesReadable(p: Page, name: string): Promise<void> {
  const unlabelled = await p.locator(".table-wrap table").evaluateAll((tables) =>
    tables.flatMap((t) => {
      const heads = [...t.querySelectorAll("thead th")].map((th) => th.textContent?.trim() ?? "");
      return [...t.querySelectorAll("tbody tr")]
        .flatMap((tr) =>
          [...tr.children].map((td, i) => ({
            heading: heads[i] ?? "",
            label: td.getAttribute("data-label") ?? (td.classList.contains("actions") ? "Actions" : "(none)"),
          })),
        )
        .filter((c) => c.heading !== c.label);
    }),
  );
  expect({ name, unlabelled }).toEqual({ name, unlabelled: [] });
  const outside = await p
    .locator(".table-wrap :is(a, button, select, input)")
    .evaluateAll((els) =>
      els
        .map((e) => ({ control: e.outerHTML.slice(0, 80), left: e.getBoundingClientRect().left, right: e.getBoundingClientRect().right }))
        .filter((c) => c.left < 0 || c.right > document.documentElement.clientWidth),
    );
  expect({ name, outside }).toEqual({ name, outside: [] });
  if (name === "keys") {
    const revoke = p.locator("tr[data-key-id]").first().getByRole("button", { name: "Revoke" });
    const box = await revoke.boundingBox();
    expect(box).not.toBeNull();
    expect(box?.x ?? -1).toBeGreaterThanOrEqual(0);
    expect((box?.x ?? 0) + (box?.width ?? Number.POSITIVE_INFINITY)).toBeLessThanOrEqual(390);
  }
}

test("screenshots of the main pages at 1280 and 390 px", async () => {
  visited.push(["/", "dashboard"], ["/settings/keys", "keys"], ["/members", "members-page"]);
  const seen = new Set<string>();
  for (const width of [1280, 390]) {
    const { context, page: p } = await newPage(browser, width);
    await context.addCookies(cookies);
    for (const [hash, name] of visited) {
      if (seen.has(`${name}-${width}`)) continue;
      seen.add(`${name}-${width}`);
      await p.goto(`${s.url}/#${hash}`);
      await p
        .waitForFunction(() => (document.querySelector(".content")?.children.length ?? 0) > 0 && !document.body.innerText.includes("Loading"))
        .catch(async (e: Error) => {
          await shot(p, `failed-${name}`);
          throw new Error(`${name} at ${width}px: ${e.message}`);
        });
      await p.waitForLoadState("networkidle");
      const file = await shot(p, name);
      expect(await Bun.file(file).exists()).toBe(true);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect({ name, width, overflow }).toEqual({ name, width, overflow: 0 });
      if (width === 390) await narrowTablesReadable(p, name);
      if (name === "project") {
        // The side card of recent runs keeps four columns and says how long ago each run started.
        const recent = p.locator(".card", { hasText: "Recent runs" });
        expect(await recent.locator("th").allTextContents()).toEqual(["Status", "Automation", "Started", "Duration"]);
        expect(await recent.locator("td[data-label='Started']").first().textContent()).toMatch(/^(just now|\d+ min ago)$/);
      }
    }
    await context.close();
  }
});
