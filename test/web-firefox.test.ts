// The web application in real headless Firefox (Debian's firefox-esr, driven over WebDriver BiDi by
// puppeteer-core) against a real server: first-run setup, a key created in the settings panel and used against
// the API, a project created from its page, an automation's run shown with its steps, sign out and in again;
// every main page fits a 390 px wide screen. Screenshots go beside the Chromium ones, prefixed "firefox-".
// (playwright-core drives Firefox only in its own patched build, or over BiDi with commands ESR lacks.)
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser, type ElementHandle, type Page } from "puppeteer-core";
import type { RunningServer } from "../src/server";
import { SCREENSHOT_DIR, startEmptyServer } from "./helpers/browser";
import { tempDir } from "./helpers/server";

setDefaultTimeout(60_000);

const FIREFOX = process.env.SVC_TEST_FIREFOX ?? "/usr/bin/firefox-esr";
const PASSWORD = "firefox owner 123";

let server: RunningServer;
let browser: Browser;
let page: Page;

async function shot(name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const width = page.viewport()?.width ?? 0;
  await page.screenshot({ path: join(SCREENSHOT_DIR, `firefox-${name}-${width}.png`), fullPage: true });
}

/** Waits until an element matching `selector` whose text contains `text` is there, and returns it. */
async function byText(selector: string, text: string, timeout = 10_000): Promise<ElementHandle<Element>> {
  const handle = await page.waitForFunction(
    (sel: string, t: string) => [...document.querySelectorAll(sel)].find((e) => (e.textContent ?? "").replace(/\s+/g, " ").trim().includes(t)) ?? false,
    { timeout },
    selector,
    text,
  );
  return handle as ElementHandle<Element>;
}

const heading = (text: string) => byText("h1", text);

/** The input inside the form field labelled `label` (fields are `<label class="field"><span>Label</span><input>`). */
async function field(label: string): Promise<ElementHandle<Element>> {
  const handle = await page.waitForFunction(
    (l: string) => {
      const lab = [...document.querySelectorAll("label")].find((e) => (e.firstElementChild?.textContent ?? e.textContent ?? "").trim().startsWith(l));
      return lab?.querySelector("input, textarea, select") ?? false;
    },
    { timeout: 10_000 },
    label,
  );
  return handle as ElementHandle<Element>;
}

async function fill(label: string, value: string): Promise<void> {
  const input = await field(label);
  await input.click({ count: 3 });
  await input.type(value);
}

async function clickButton(name: string): Promise<void> {
  await (await byText("button", name)).click();
}

async function go(hash: string): Promise<void> {
  await page.goto(`${server.url}/#${hash}`);
}

/** True when the page is no wider than the viewport (nothing to scroll sideways). */
const fitsWidth = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

beforeAll(async () => {
  server = await startEmptyServer();
  browser = await puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    userDataDir: tempDir("svc-firefox-"),
    env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: "1" },
  });
  page = await browser.newPage();
  page.setDefaultTimeout(10_000);
  await page.setViewport({ width: 1280, height: 900 });
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test("it is really Firefox", async () => {
  expect(await browser.version()).toMatch(/^firefox\//i);
  expect(await page.evaluate(() => navigator.userAgent)).toContain("Firefox/");
});

test("first run: the setup page creates the workspace and its owner", async () => {
  await go("/");
  await heading("Set up svc");
  await fill("Workspace name", "Fox QA");
  await fill("Your name", "Fiona Fox");
  await fill("Email", "fiona@fox.test");
  await fill("Password", PASSWORD);
  await shot("setup");
  await clickButton("Create workspace");
  await heading("Dashboard");
  expect(await page.$eval(".who-name", (e) => e.textContent)).toContain("Fox QA");
});

let key = "";

test("a key created in the settings panel is shown once and works against the API", async () => {
  await go("/settings/keys");
  await heading("CLI & API keys");
  await fill("Key name", "firefox laptop");
  await clickButton("Create key");
  const box = await page.waitForSelector("[data-testid=new-key]");
  expect(await box?.evaluate((e) => e.textContent)).toContain("cannot be shown again");
  key = ((await page.$eval("[data-testid=new-key] code", (e) => e.textContent)) ?? "").trim();
  expect(key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
  await shot("keys");
  const res = await fetch(`${server.url}/api/v1/ops/projects`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
});

test("a project made on the projects page, and an automation's run shown with its steps", async () => {
  await go("/projects");
  await fill("Project name", "Fox Shop");
  await clickButton("Create project");
  await page.waitForFunction(() => location.hash === "#/p/fox-shop");
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/api/v1/ops${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  expect((await api("GET", "/projects/fox-shop")).status).toBe(200);

  // An automation against the server itself, run, then read on its run page.
  const made = await api("POST", "/projects/fox-shop/automations", {
    name: "health answers",
    kind: "http",
    steps: [{ name: "GET /healthz", request: { url: `${server.url}/healthz` }, expect: [{ status: 200 }] }],
  });
  expect(made.status).toBe(201);
  const automation = (await made.json()) as { id: string };
  const started = await api("POST", `/projects/fox-shop/automations/${automation.id}/run`, {});
  expect(started.status).toBe(202);
  const run = (await started.json()) as { id: string };
  await go(`/p/fox-shop/runs/${run.id}`);
  await byText("body", "GET /healthz");
  await byText(".badge, [class*=status]", "passed", 20_000);
  await shot("run");
});

test("every main page fits a 390 px wide screen", async () => {
  await page.setViewport({ width: 390, height: 844 });
  // [hash, what shows the page is there (selector, text), screenshot name]
  const pages: [string, string, string, string][] = [
    ["/", "h1", "Dashboard", "dashboard"],
    ["/projects", "h1", "Projects", "projects"],
    ["/p/fox-shop", ".crumbs", "Fox Shop", "project"],
    ["/p/fox-shop/automations", "td, a", "health answers", "automations"],
    ["/p/fox-shop/runs", "td, a", "health answers", "runs"],
    ["/settings/keys", "td", "firefox laptop", "keys"],
    ["/members", "td", "fiona@fox.test", "members"],
  ];
  const tooWide: string[] = [];
  for (const [hash, selector, text, name] of pages) {
    await go(hash);
    await byText(selector, text);
    if (!(await fitsWidth())) tooWide.push(hash);
    await shot(name);
  }
  expect(tooWide).toEqual([]);
  await page.setViewport({ width: 1280, height: 900 });
});

test("sign out, a wrong password is refused with a message, the right one signs in", async () => {
  await go("/");
  await clickButton("Sign out");
  await heading("Sign in");
  await fill("Email", "fiona@fox.test");
  await fill("Password", "not the password");
  await clickButton("Sign in");
  const alert = await page.waitForSelector("[role=alert]");
  expect(await alert?.evaluate((e) => e.textContent)).toContain("wrong email or password");
  await fill("Password", PASSWORD);
  await clickButton("Sign in");
  await heading("Dashboard");
});
