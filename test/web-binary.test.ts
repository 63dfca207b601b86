// The web application inside the compiled executable: `dist/svc serve` on an empty data directory serves the
// embedded pages (no files beside it), the first-run setup works in Chromium, and a key made there works.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import type { Browser } from "playwright-core";
import { type ServeProcess, startServe } from "./helpers/binary";
import { launchBrowser, newPage, shot } from "./helpers/browser";
import { tempDir } from "./helpers/server";

setDefaultTimeout(30_000);

let dir: string;
let serve: ServeProcess;
let browser: Browser;

beforeAll(async () => {
  dir = tempDir("svc-web-bin-");
  serve = await startServe([], { cwd: dir });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  if (serve && serve.proc.exitCode === null) await serve.stop("SIGTERM");
  rmSync(dir, { recursive: true, force: true });
});

test("the embedded bundle is served with its assets, minified, compressed and under hashed names", async () => {
  const html = await (await fetch(serve.url)).text();
  const js = /src="(\/[^"]+\.js)"/.exec(html)?.[1] ?? "";
  const css = /href="(\/[^"]+\.css)"/.exec(html)?.[1] ?? "";
  const jsRes = await fetch(`${serve.url}${js}`);
  expect(jsRes.status).toBe(200);
  expect(jsRes.headers.get("content-type")).toContain("javascript");
  const body = await jsRes.text();
  console.log(`web bundle: ${js} ${body.length} bytes, ${Bun.gzipSync(body).length} gzipped`);
  expect((await fetch(`${serve.url}${css}`)).status).toBe(200);
  // Hashed names kept a year, compressed as the browser accepts, and an icon where clients look for one.
  for (const path of [js, css]) {
    expect(path).toMatch(/^\/assets\/[\w-]+\.[a-z0-9]{10}\.(js|css)$/);
    const br = await fetch(`${serve.url}${path}`, { headers: { "accept-encoding": "br" }, decompress: false } as RequestInit);
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const gz = await fetch(`${serve.url}${path}`, { headers: { "accept-encoding": "gzip" }, decompress: false } as RequestInit);
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    if (path === js) {
      const brBytes = (await br.arrayBuffer()).byteLength;
      const gzBytes = (await gz.arrayBuffer()).byteLength;
      console.log(`web bundle over the wire: ${gzBytes} bytes gzip, ${brBytes} bytes brotli`);
      expect(brBytes).toBeLessThan(body.length / 3);
    }
  }
  expect((await fetch(`${serve.url}/favicon.ico`)).status).toBe(200);
  // Only its own origin may provide scripts and connections; no plugins, no <base> rewriting.
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? "";
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).toContain("object-src 'none'");
  // Scripts only from the origin, never inline or eval'd; inline styles are allowed (the steps editor writes its own).
  expect(/script-src[^;]*unsafe/.test(csp)).toBe(false);
  expect(csp).not.toContain("unsafe-eval");
  expect(csp).not.toContain("unsafe-eval");
});

test("first-run setup in the browser, then a key from the panel works against the API", async () => {
  const { page } = await newPage(browser);
  const refused: string[] = [];
  page.on("console", (m) => {
    if (m.text().includes("Content Security Policy")) refused.push(m.text());
  });
  await page.goto(serve.url);
  await page.getByLabel("Workspace name").fill("Binary QA");
  await page.getByLabel("Your name").fill("Bo");
  await page.getByLabel("Email").fill("bo@binary.test");
  await page.getByLabel("Password").fill("binary password 1");
  await page.getByRole("button", { name: "Create workspace" }).click();
  await page.getByRole("heading", { name: "Dashboard" }).waitFor();
  await page.goto(`${serve.url}/#/settings/keys`);
  await page.getByLabel("Key name").fill("from the binary");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("new-key").locator("code").innerText()).trim();
  await shot(page, "binary-keys");
  const me = await fetch(`${serve.url}/api/v1/ops/me`, { headers: { authorization: `Bearer ${key}` } });
  expect(me.status).toBe(200);
  expect((await me.json()).workspace.name).toBe("Binary QA");
  expect(serve.logs()).not.toContain(key);
  expect(refused).toEqual([]); // the app needs nothing its policy forbids
});
