// Web-application test support: a server with no users yet (first run), a cookie-keeping client of the web
// routes, and headless Chromium (Debian's headless shell when installed, through playwright-core) with screenshots kept for review.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { loadConfig } from "../../config/load";
import { findChromium } from "../../src/runner/chromium";
import { type RunningServer, startServer } from "../../src/server";
import { tempDir } from "./server";

export const SCREENSHOT_DIR = join(import.meta.dir, "..", "..", "test-artifacts", "screenshots");

/** A real server on a free port over an empty data directory: nobody has set it up yet. */
export async function startEmptyServer(flags: Record<string, unknown> = {}): Promise<RunningServer> {
  const config = loadConfig({ env: {}, flags: { port: 0, data_dir: tempDir("svc-web-"), log_level: "warn", ...flags } });
  return startServer(config);
}

/** A client of the web routes that keeps the session cookie and sends the CSRF token, as the browser does. */
export class WebClient {
  cookie = "";
  csrf = "";
  constructor(readonly base: string) {}

  async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(this.cookie ? { cookie: this.cookie } : {}),
        ...(method !== "GET" && this.csrf ? { "x-csrf-token": this.csrf } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = set.split(";")[0] ?? "";
    if (res.ok && res.headers.get("content-type")?.includes("json")) {
      const copy = (await res.clone().json()) as { csrf_token?: string };
      if (copy.csrf_token) this.csrf = copy.csrf_token;
    }
    return res;
  }

  signIn(email: string, password: string): Promise<Response> {
    return this.send("POST", "/api/v1/web/login", { email, password });
  }
}

/**
 * The Chromium the UI tests drive: SVC_TEST_CHROMIUM, else the one browser runs use (findChromium: Debian's headless
 * shell first, the same engine as the full browser; the web test files take about three quarters of the time with it),
 * else the full browser.
 */
const found = findChromium(undefined);
export const TEST_CHROMIUM = process.env.SVC_TEST_CHROMIUM ?? ("path" in found ? found.path : "/usr/bin/chromium");

const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: TEST_CHROMIUM, headless: true, args: LAUNCH_ARGS });
}

export async function newPage(browser: Browser, width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  watch(page);
  return { context, page };
}

const pageEvents = new WeakMap<Page, string[]>();

/** Keeps the last page errors, console errors and refused requests of a page, for `explained` to report. */
export function watch(page: Page): void {
  const events: string[] = [];
  pageEvents.set(page, events);
  const note = (line: string) => {
    events.push(line.slice(0, 300));
    if (events.length > 20) events.shift();
  };
  page.on("pageerror", (e) => note(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") note(`console ${m.type()}: ${m.text()}`);
  });
  page.on("requestfailed", (r) => note(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText ?? ""}`));
  page.on("response", (r) => {
    if (r.status() >= 400) note(`response ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  page.on("crash", () => note("the page crashed"));
}

/**
 * Runs a test's steps on `page`; when one fails, the error also says where the page was, what it showed and what
 * went wrong in it (page errors, console errors, refused requests), and a screenshot is kept as failed-<name>.
 */
export async function explained(page: Page, name: string, steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch (e) {
    const text = await Promise.race([
      page.evaluate(() => document.body?.innerText ?? "").catch((x: Error) => `(unreadable: ${x.message})`),
      Bun.sleep(2_000).then(() => "(the page did not answer within 2 s)"),
    ]);
    await Promise.race([shot(page, `failed-${name}`).catch(() => ""), Bun.sleep(3_000)]);
    const events = pageEvents.get(page) ?? [];
    const error = e instanceof Error ? e : new Error(String(e));
    error.message = [
      error.message,
      `page: ${page.url()}`,
      `shown: ${text.replace(/\s+/g, " ").slice(0, 600)}`,
      ...(!pageEvents.has(page) ? [] : events.length ? ["in the page:", ...events.map((l) => `  ${l}`)] : ["in the page: no errors"]),
    ].join("\n");
    throw error;
  }
}

/** Signs in through the sign-in page as the test server's owner (startTestServer's password) and waits for the dashboard. */
export async function signInAsOwner(page: Page, url: string, email = "owner@acme.test", password = "correct horse battery"): Promise<void> {
  await page.goto(url);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Dashboard" }).waitFor();
}

let announced = false;

/** Saves a full-page screenshot under test-artifacts/screenshots/ for a reviewer to look at. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  if (!announced) {
    console.log(`screenshots: ${SCREENSHOT_DIR}`);
    announced = true;
  }
  const width = page.viewportSize()?.width ?? 0;
  const file = join(SCREENSHOT_DIR, `${name}-${width}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Replaces the whole text of the steps editor (CodeMirror) as a person pasting does: select all, then paste through
 * the editor's own input handling. (Playwright's fill on a contenteditable can lose the selection while the editor
 * redraws under load, and then inserts beside the old text.)
 */
export async function replaceEditorText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.click();
  await page.keyboard.press("Control+a");
  await editor.evaluate((el, t) => {
    const data = new DataTransfer();
    data.setData("text/plain", t);
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
  // The editor draws a line per line of text: the text is back when its lines, read in order, are the text's.
  await page.waitForFunction(
    (t) => [...(document.querySelector(".cm-content")?.querySelectorAll(":scope > .cm-line") ?? [])].map((l) => l.textContent).join("\n") === t,
    text,
  );
}

/** Waits until a field holds `want` (a form shown afresh after a save, say); fails naming what it held. */
export async function expectValue(field: Locator, want: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  let got = await field.inputValue();
  while (got !== want && Date.now() < deadline) {
    await Bun.sleep(50);
    got = await field.inputValue();
  }
  if (got !== want) throw new Error(`the field holds ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
}
