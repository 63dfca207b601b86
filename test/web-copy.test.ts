// The copy buttons of the settings panel in real headless Chromium against a real server: with the clipboard API
// (localhost, permission granted), without it (removed by an init script, and for real on plain HTTP of a host
// that is not localhost, where browsers do not provide it), and when the browser refuses to copy at all (the
// text is left selected and the page says to press Ctrl+C / ⌘C). Every copied text is read back from the
// browser's clipboard.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { shot, TEST_CHROMIUM } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(30_000);

// Not the shared launchBrowser(): this browser also resolves svc.lan to the loopback address, so the service can be
// opened as http://svc.lan:PORT, a plain-HTTP origin that is not localhost (not a secure context).
const LAN_HOST = "svc.lan";
const LAUNCH_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  `--host-resolver-rules=MAP ${LAN_HOST} 127.0.0.1`,
];

let s: TestServer;
let browser: Browser;
/** Signed in at the server's own (loopback) origin, allowed to read and write the clipboard. */
let reader: { context: BrowserContext; page: Page };

/** Counts document.execCommand("copy") calls (passing them on unchanged), to tell which way a copy went. */
function countExecCopies(): void {
  const original = document.execCommand.bind(document);
  (window as unknown as { execCopies: number }).execCopies = 0;
  document.execCommand = (command: string, showUI?: boolean, value?: string) => {
    if (command === "copy") (window as unknown as { execCopies: number }).execCopies++;
    return original(command, showUI, value);
  };
}

const execCopies = (page: Page) => page.evaluate(() => (window as unknown as { execCopies: number }).execCopies);

async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(base);
  await page.getByLabel("Email").fill("owner@acme.test");
  await page.getByLabel("Password").fill("correct horse battery");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Dashboard" }).waitFor();
}

/** A page of a new context sharing the reader's session (no second sign-in), with `init` run before the app. */
async function pageWithSession(init?: () => void): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies(await reader.context.cookies());
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.addInitScript(countExecCopies);
  if (init) await page.addInitScript(init);
  return { context, page };
}

async function createKey(page: Page, base: string, name: string): Promise<string> {
  await page.goto(`${base}/#/settings/keys`);
  try {
    await page.getByLabel("Key name").waitFor();
  } catch (e) {
    // Say what the page showed instead of the form (it has been seen once on a loaded machine).
    const shown = (
      await page
        .locator("body")
        .innerText()
        .catch(() => "")
    ).slice(0, 500);
    throw new Error(`the keys page did not show its form at ${page.url()}; the page showed: ${JSON.stringify(shown)} (${(e as Error).message.split("\n")[0]})`);
  }
  await page.getByLabel("Key name").fill(name);
  await page.getByRole("button", { name: "Create key" }).click();
  // The list shows the key once it is created, and the box above it shows the new key by then (not an earlier one).
  await page.locator("tr", { hasText: name }).waitFor();
  const key = (await page.getByTestId("new-key").locator("code").innerText()).trim();
  expect(key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
  return key;
}

/** What the browser's clipboard holds now (headless Chromium has one clipboard for all its contexts). */
const clipboard = () => reader.page.evaluate(() => navigator.clipboard.readText());

beforeAll(async () => {
  s = await startTestServer();
  browser = await chromium.launch({ executablePath: TEST_CHROMIUM, headless: true, args: LAUNCH_ARGS });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: s.url });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.addInitScript(countExecCopies);
  reader = { context, page };
  await signIn(page, s.url);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

test("with the clipboard API and permission, Copy key puts exactly the new key on the clipboard", async () => {
  const page = reader.page;
  const key = await createKey(page, s.url, "copied with the clipboard API");
  expect(await page.evaluate(() => [window.isSecureContext, typeof navigator.clipboard?.writeText])).toEqual([true, "function"]);
  const button = page.getByRole("button", { name: "Copy key" });
  expect(await button.innerText()).toBe("Copy");
  await button.click();
  await button.getByText("Copied", { exact: true }).waitFor();
  expect(await clipboard()).toBe(key);
  expect(await execCopies(page)).toBe(0);
  expect(await page.locator(".copy-hint").count()).toBe(0);

  // A second key in its place is not "Copied" until it is copied in turn.
  const second = await createKey(page, s.url, "copied second");
  expect(second).not.toBe(key);
  expect(await button.innerText()).toBe("Copy");
  await button.click();
  await button.getByText("Copied", { exact: true }).waitFor();
  expect(await clipboard()).toBe(second);
});

test("with navigator.clipboard removed, Copy key still copies the key (through execCommand)", async () => {
  const { context, page } = await pageWithSession(() => {
    Object.defineProperty(navigator, "clipboard", { value: undefined });
  });
  const key = await createKey(page, s.url, "copied without the clipboard API");
  expect(await page.evaluate(() => typeof navigator.clipboard)).toBe("undefined");
  expect(await clipboard()).not.toBe(key);
  const button = page.getByRole("button", { name: "Copy key" });
  await button.click();
  await button.getByText("Copied", { exact: true }).waitFor();
  expect(await clipboard()).toBe(key);
  expect(await execCopies(page)).toBe(1);
  expect(await page.locator(".copy-hint").count()).toBe(0);
  // The hidden text field used for copying is gone again, and focus is back on the button.
  expect(await page.locator("textarea.copy-buffer").count()).toBe(0);
  expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Copy key");
  await context.close();
});

test("on plain HTTP of a host that is not localhost there is no clipboard API, and copying still works", async () => {
  const base = `http://${LAN_HOST}:${new URL(s.url).port}`;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.addInitScript(countExecCopies);
  await signIn(page, base);
  const key = await createKey(page, base, "copied on plain HTTP");
  expect(await page.evaluate(() => [location.origin, window.isSecureContext, typeof navigator.clipboard])).toEqual([base, false, "undefined"]);
  const button = page.getByRole("button", { name: "Copy key" });
  await button.click();
  await button.getByText("Copied", { exact: true }).waitFor();
  expect(await clipboard()).toBe(key);

  // A multi-line text arrives exactly as shown, line breaks included.
  const mcpButton = page.getByRole("button", { name: "Copy MCP configuration" });
  const shown = await page.locator(".copyblock", { has: mcpButton }).locator("code").textContent();
  expect(shown).toContain("\n");
  await mcpButton.click();
  await mcpButton.getByText("Copied", { exact: true }).waitFor();
  const copied = await clipboard();
  expect(copied).toBe(shown ?? "");
  expect(JSON.parse(copied).mcpServers.svc).toMatchObject({ command: "svc", args: ["mcp"] });
  expect(await execCopies(page)).toBe(2);
  await context.close();
});

test("when the browser refuses to copy at all, the text stays selected and the page says to press Ctrl+C / ⌘C", async () => {
  const { context, page } = await pageWithSession(() => {
    Object.defineProperty(navigator, "clipboard", { value: undefined });
    document.execCommand = () => false;
  });
  const key = await createKey(page, s.url, "copied by hand");
  const before = await clipboard();
  const button = page.getByRole("button", { name: "Copy key" });
  await button.click();
  const hint = page.getByTestId("new-key").locator(".copy-hint");
  await hint.waitFor();
  expect(await hint.isVisible()).toBe(true);
  expect(await hint.innerText()).toContain("press Ctrl+C (⌘C on a Mac)");
  expect(await hint.getAttribute("role")).toBe("status");
  expect(await page.evaluate(() => window.getSelection()?.toString())).toBe(key);
  expect(await button.innerText()).toBe("Copy");
  expect(await clipboard()).toBe(before);
  await shot(page, "keys-copy-by-hand");
  await context.close();
});
