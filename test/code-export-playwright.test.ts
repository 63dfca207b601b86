// Exporters: automations as Playwright tests (@playwright/test), run by `npx playwright test` as a process of its
// own against the local target app, in the system's Chromium (the config in the temp dir says so, not the file).
// The golden files are .spec.txt so that no test runner takes them for tests of this repository.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TEST_CHROMIUM as CHROMIUM } from "./helpers/browser";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startRun, waitForRun } from "./helpers/runs";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

const ROOT = join(import.meta.dir, "..");
const GOLDEN = join(import.meta.dir, "golden");
const PASSWORD = "s3cret-pass";
let s: TestServer;
let app: TargetApp;

const automations: Record<string, { kind: "http" | "browser"; steps: unknown[] }> = {
  "sign in and browse": {
    kind: "browser",
    steps: [
      { name: "open the sign-in page", goto: "/login" },
      { fill: { locator: "label=Email", value: "ann@example.test" } },
      { fill: { locator: 'label="Password"', value: "{{PASSWORD}}" } },
      { check: "label=Remember me" },
      { select: { locator: "css=#team", value: "dev" } },
      { click: 'role=button[name="Sign in"]' },
      { expect: { url: "/dashboard", title: "Dashboard", text: "Welcome ann@example.test" } },
      { click: 'button="Items"' },
      { wait_for: { url: { matches: "/items-page$" } } },
      { expect: { count: { locator: "testid=item", equals: 3 }, visible: 'role=heading[name="Items"]' } },
      { fill: { locator: 'placeholder="filter"', value: "bre" } },
      { press: { locator: "testid=filter", key: "Enter" } },
      { expect: { visible: 'text="bread"', hidden: "text=apple" } },
      { click: "role=button[name='Load more']" },
      { wait_for: { text: "Loaded later" }, timeout_ms: 10000 },
      { hover: "css=a[href='/items-page']" },
      { expect: { visible: "#tip" } },
      { screenshot: "end" },
    ],
  },
  "items over http": {
    kind: "http",
    steps: [
      {
        name: "list",
        request: { method: "GET", url: "/items" },
        expect: [
          { status: 200 },
          { header: "Content-Type", contains: "json" },
          { header: "X-Total", gte: 3 },
          { json: "$.items.length", equals: 3 },
          { json: "items[1]", equals: { id: 2, name: "bread", price: 5, tags: ["bakery"] } },
          { json: "$.items[*].name", contains: "bread" },
          { json: "$.items[-1].name", equals: "cheese", type: "string" },
          { json: "$.missing", exists: false },
          { body: { matches: "apple.*bread" } },
          { body: { matches: "(?i)APPLE.*BREAD" } },
          { duration_ms: { lt: 60000 } },
        ],
        capture: { first_id: "$.items[0].id" },
      },
      {
        name: "a redirect's location",
        request: { method: "GET", url: "/redirect-to?to=/items/1", follow_redirects: false },
        expect: [{ status: 307 }],
        capture: { item_path: "header:location" },
      },
      {
        name: "follow it: a relative captured URL joins BASE_URL",
        request: { method: "GET", url: "{{item_path}}" },
        expect: [{ json: "$.id", equals: 1 }],
      },
      {
        name: "read the first",
        request: { method: "GET", url: "/items/{{first_id}}" },
        expect: [{ status: { gte: 200, lt: 300 } }, { json: "$.id", equals: "{{first_id}}" }],
      },
      {
        name: "post with the secret",
        request: {
          method: "POST",
          url: "/echo",
          headers: { Authorization: "Bearer {{PASSWORD}}" },
          query: { id: "n{{first_id}}" },
          json: { id: "{{first_id}}", note: "id {{first_id}}" },
        },
        expect: [
          { json: "$.headers.authorization", equals: "Bearer {{PASSWORD}}" },
          { json: "$.query.id", equals: "n{{first_id}}" },
          { json: "$.body", equals: '{"id":1,"note":"id 1"}' },
        ],
      },
      {
        request: { method: "GET", url: "/redirect-to", query: { to: "/health" }, follow_redirects: false },
        expect: [{ status: 307 }, { header: "Location", equals: "/health" }],
        capture: { where: "header:Location" },
      },
      { request: { method: "GET", url: "{{BASE_URL}}{{where}}" }, expect: [{ json: "$.ok", equals: true }] },
      {
        name: "a text body with characters TypeScript would read",
        request: { method: "PUT", url: "/echo", headers: { "X-Odd`Name": "${x}" }, body: "a `tick`, ${not} a template, \\ and {{first_id}}\n" },
        expect: [
          { json: "$.body", equals: "a `tick`, ${not} a template, \\ and 1\n" },
          { json: "$.headers['x-odd`name']", equals: "${x}" },
          { header: "Content-Type", contains: "json" },
        ],
      },
    ],
  },
  "wrong page text": {
    kind: "browser",
    steps: [{ goto: "/items-page" }, { expect: { text: "Not on this page" }, timeout_ms: 1500 }],
  },
  "wrong total": { kind: "http", steps: [{ request: { method: "GET", url: "/items" }, expect: [{ json: "$.total", equals: 4 }] }] },
};

beforeAll(async () => {
  app = startTargetApp();
  s = await startTestServer();
  expect((await s.call("POST", "/projects", { name: "pw", slug: "pw" })).status).toBe(201);
  const env = await s.call("POST", "/projects/pw/environments", { name: "local", variables: { BASE_URL: app.url }, secrets: { PASSWORD } });
  expect(env.status).toBe(201);
  for (const [name, a] of Object.entries(automations)) {
    const res = await s.call("POST", "/projects/pw/automations", { name, ...a, environment: "local" });
    expect(res.status, await res.clone().text()).toBe(201);
  }
}, 60_000);
afterAll(async () => {
  await s.stop();
  await app.stop();
});

async function exported(name: string, environment?: string): Promise<string> {
  const q = environment ? `?environment=${environment}` : "";
  const res = await s.call("GET", `/projects/pw/automations/${encodeURIComponent(name)}/playwright${q}`);
  expect(res.status).toBe(200);
  return res.text();
}

/** A folder with the exported specs and a config pointing at the system Chromium, where @playwright/test resolves. */
function project(files: Record<string, string>): string {
  const dir = tempDir("svc-playwright-");
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  writeFileSync(
    join(dir, "playwright.config.ts"),
    [
      'import { defineConfig } from "@playwright/test";',
      "export default defineConfig({",
      '  testDir: ".",',
      '  reporter: "line",',
      "  workers: 1,",
      "  timeout: 60_000,",
      `  use: { headless: true, launchOptions: { executablePath: ${JSON.stringify(CHROMIUM)}, args: ["--no-sandbox", "--disable-gpu"] } },`,
      "});",
      "",
    ].join("\n"),
  );
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** `npx playwright test` in the folder, as a process of its own (the target app answers from this one). */
async function playwright(dir: string, env: Record<string, string>) {
  const p = Bun.spawn(["npx", "--no-install", "playwright", "test"], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? dir, CI: "1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: `${out}${err}` };
}

test("the automations pass in svc itself (what Playwright is checked against), the wrong ones fail", async () => {
  for (const name of Object.keys(automations)) {
    const run = await waitForRun(s, "pw", await startRun(s, "pw", encodeURIComponent(name)), 120_000);
    expect({ name, status: run.status }).toEqual({ name, status: name.startsWith("wrong") ? "failed" : "passed" });
  }
}, 240_000);

test("a browser and an http automation export as the golden Playwright tests, with and without an environment", async () => {
  const golden = (name: string) => readFileSync(join(GOLDEN, name), "utf8").replaceAll("http://127.0.0.1:TARGET", app.url);
  if (process.env.SVC_UPDATE_GOLDEN === "1") {
    // Rewrites the golden files from this build's exports; review the diff before committing.
    writeFileSync(join(GOLDEN, "sign-in-and-browse.spec.txt"), (await exported("sign in and browse")).replaceAll(app.url, "http://127.0.0.1:TARGET"));
    writeFileSync(join(GOLDEN, "items-over-http.spec.txt"), (await exported("items over http")).replaceAll(app.url, "http://127.0.0.1:TARGET"));
    writeFileSync(join(GOLDEN, "items-over-http.local.spec.txt"), (await exported("items over http", "local")).replaceAll(app.url, "http://127.0.0.1:TARGET"));
  }
  expect(await exported("sign in and browse")).toBe(golden("sign-in-and-browse.spec.txt"));
  expect(await exported("items over http")).toBe(golden("items-over-http.spec.txt"));
  const written = await exported("items over http", "local");
  expect(written).toBe(golden("items-over-http.local.spec.txt"));
  expect(written).not.toContain(PASSWORD);
  expect(written).not.toContain('env("BASE_URL")');
});

test("npx playwright test runs the exports in the system Chromium and they pass, with and without --env", async () => {
  const dir = project({
    "browser.spec.ts": await exported("sign in and browse"),
    "http.spec.ts": await exported("items over http"),
    "browser.local.spec.ts": await exported("sign in and browse", "local"),
    "http.local.spec.ts": await exported("items over http", "local"),
  });
  // Without --env BASE_URL and the secret come from the environment; with it, only the secret does (the golden
  // file above has no env("BASE_URL")).
  const r = await playwright(dir, { BASE_URL: app.url, PASSWORD });
  expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: expect.stringContaining("4 passed") });
  expect(app.seen.some((x) => x.path.startsWith("/echo") && x.headers.authorization === `Bearer ${PASSWORD}`)).toBe(true);
}, 180_000);

test("exports whose checks fail in svc fail under Playwright", async () => {
  const dir = project({
    "page.spec.ts": await exported("wrong page text", "local"),
    "total.spec.ts": await exported("wrong total", "local"),
  });
  const r = await playwright(dir, {});
  expect(r.code).not.toBe(0);
  expect(r.out).toContain("2 failed");
  expect(r.out).toContain("Not on this page");
  expect(r.out).toContain("json $.total");
}, 180_000);
