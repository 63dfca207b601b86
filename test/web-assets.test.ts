// How the web application's files are served: the page `no-cache`, its scripts, styles and icon under hashed names
// kept a year, compressed by what the browser accepts (brotli, gzip, none), an icon at /favicon.ico, and a first
// load in Chromium with no refused request and no Content-Security-Policy violation.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import type { Browser } from "playwright-core";
import { explained, launchBrowser, newPage } from "./helpers/browser";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(30_000);

let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  s = await startTestServer();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

const raw = (path: string, headers: Record<string, string> = {}) => fetch(`${s.url}${path}`, { headers, decompress: false } as RequestInit);

/** The scripts, styles and icon the entry page refers to. */
async function references(): Promise<string[]> {
  const html = await (await fetch(s.url)).text();
  return [...html.matchAll(/\b(?:src|href)="(\/[^"]+)"/g)].map((m) => m[1] ?? "");
}

test("the page is never cached; its files have hashed names and are kept a year", async () => {
  const page = await fetch(s.url);
  expect(page.headers.get("cache-control")).toBe("no-cache");
  const refs = await references();
  expect(refs.some((r) => r.endsWith(".js"))).toBe(true);
  expect(refs.some((r) => r.endsWith(".css"))).toBe(true);
  expect(refs.some((r) => r.endsWith(".svg"))).toBe(true);
  for (const ref of refs) {
    expect(ref).toMatch(/^\/assets\/[\w-]+\.[a-z0-9]{10}\.(js|css|svg)$/);
    const res = await raw(ref);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
    // Asked again with the validator it was given: nothing is sent twice.
    const again = await raw(ref, { "if-none-match": res.headers.get("etag") ?? "" });
    expect(again.status).toBe(304);
  }
  const unknown = await raw("/assets/chunk-nothere.0123456789.js");
  expect(unknown.status).toBe(404);
  expect((await unknown.json()).error).toBe("not_found");
});

test("files are sent brotli- or gzip-compressed as accepted, and whole to a client that accepts neither", async () => {
  for (const ref of await references()) {
    const plain = await raw(ref, { "accept-encoding": "identity" });
    expect(plain.headers.get("content-encoding")).toBeNull();
    const bytes = Buffer.from(await plain.arrayBuffer());

    const br = await raw(ref, { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers.get("content-encoding")).toBe("br");
    const brBytes = Buffer.from(await br.arrayBuffer());
    expect(brotliDecompressSync(brBytes).equals(bytes)).toBe(true);

    const gz = await raw(ref, { "accept-encoding": "gzip" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    const gzBytes = Buffer.from(await gz.arrayBuffer());
    expect(gunzipSync(gzBytes).equals(bytes)).toBe(true);

    const refused = await raw(ref, { "accept-encoding": "br;q=0, gzip" });
    expect(refused.headers.get("content-encoding")).toBe("gzip");
    if (ref.endsWith(".js")) {
      expect(brBytes.length).toBeLessThan(bytes.length / 3);
      console.log(`script ${ref}: ${bytes.length} bytes, ${gzBytes.length} gzip, ${brBytes.length} brotli`);
    }
  }
});

test("there is an icon at /favicon.ico", async () => {
  const res = await raw("/favicon.ico");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("image/svg+xml");
  expect(await res.text()).toContain("<svg");
});

test("a first load in Chromium has no failed request and no Content-Security-Policy violation", async () => {
  const { page, context } = await newPage(browser);
  await explained(page, "assets-first-load", async () => {
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || /Content Security Policy/i.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    page.on("response", (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (e) =>
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`),
      );
    });
    await page.goto(s.url);
    await page.getByLabel("Email").waitFor();
    // The icon the page names is loaded (a 404 for it would be in `problems`).
    await page.waitForLoadState("networkidle");
    expect(problems).toEqual([]);
  });
  await context.close();
});
