// Web-application test support: a server with no users yet (first run), a cookie-keeping client of the web
// routes, and headless Chromium (Debian's, through playwright-core) with screenshots kept for review.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { loadConfig } from "../../config/load";
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

const LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.SVC_TEST_CHROMIUM ?? "/usr/bin/chromium", headless: true, args: LAUNCH_ARGS });
}

export async function newPage(browser: Browser, width = 1280): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height: width < 600 ? 844 : 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  return { context, page };
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
