// The web application cannot be framed by another site (seen in real Chromium), and first-run setup answers only
// on a loopback Host or at the configured base_url, so a DNS-rebinding page cannot claim a fresh installation.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { type Browser, chromium } from "playwright-core";
import type { RunningServer } from "../src/server";
import { explained, launchBrowser, newPage, startEmptyServer, TEST_CHROMIUM, WebClient } from "./helpers/browser";

setDefaultTimeout(30_000);

const OWNER = { workspace: "Acme QA", name: "Olga Owner", email: "olga@acme.test", password: "first owner password" };

describe("framing", () => {
  let server: RunningServer;
  let framer: ReturnType<typeof Bun.serve>;
  let browser: Browser;
  beforeAll(async () => {
    server = await startEmptyServer();
    // Another origin (another port) whose page frames the web application.
    framer = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () =>
        new Response(
          `<!doctype html><title>framer</title><iframe id="f" src="${server.url}/" onload="window.framedLoaded = true" width="800" height="600"></iframe>`,
          { headers: { "content-type": "text/html" } },
        ),
    });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    framer?.stop(true);
    await server?.stop();
  });

  test("every page carries frame-ancestors 'none' in a response header", async () => {
    for (const path of ["/", "/setup-password?token=x"]) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(await res.text()).toContain('<div id="app">');
    }
  });

  test("a page on another origin framing the web app shows nothing of it, while opened directly it works", async () => {
    const { context, page } = await newPage(browser);
    try {
      await explained(page, "framed", async () => {
        await page.goto(`http://127.0.0.1:${framer.port}/`);
        await page.waitForFunction(() => (window as unknown as { framedLoaded?: boolean }).framedLoaded === true);
        const child = page.frames().find((f) => f !== page.mainFrame());
        expect(child).toBeDefined();
        // The browser blocked the document: what loaded in the frame is its error page, not the application.
        expect(child?.url().startsWith(server.url)).toBe(false);
        expect(await child?.locator("#app").count()).toBe(0);

        await page.goto(server.url);
        await page.getByRole("heading", { name: "Set up svc" }).waitFor();
      });
    } finally {
      await context.close();
    }
  });
});

describe("first-run setup and the Host", () => {
  let server: RunningServer;
  let port: number;
  beforeAll(async () => {
    server = await startEmptyServer();
    port = server.port;
  });
  afterAll(() => server?.stop());

  test("at a name that is neither loopback nor base_url, setup is refused, changes nothing, and says how to proceed", async () => {
    const host = `rebind.evil.test:${port}`;
    // A rebinding page is same-origin in the browser's eyes: its Origin names the same host.
    const c = new WebClient(server.url);
    const state = await (await c.send("GET", "/api/v1/web/session", undefined, { host })).json();
    expect(state).toMatchObject({ setup_required: true, setup_allowed: false, signed_in: false });
    expect(state.setup_hint).toContain("base_url");
    expect(state.setup_hint).toContain("svc admin create-user");

    const refused = await c.send("POST", "/api/v1/web/setup", OWNER, { host, origin: `http://${host}` });
    expect(refused.status).toBe(403);
    const body = await refused.json();
    expect(body).toMatchObject({ error: "forbidden" });
    expect(body.message).toContain("svc admin create-user");
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect(await server.core.db.selectFrom("users").select("id").execute()).toEqual([]);

    // On loopback it is still offered.
    const here = await (await new WebClient(server.url).send("GET", "/api/v1/web/session", undefined, { host: `localhost:${port}` })).json();
    expect(here).toMatchObject({ setup_required: true, setup_allowed: true });
  });

  test("in a browser that reaches the server under another name, the setup page shows how to proceed instead of the form", async () => {
    const browser = await chromium.launch({
      executablePath: TEST_CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP rebind.evil.test 127.0.0.1"],
    });
    try {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      await explained(page, "setup-elsewhere", async () => {
        await page.goto(`http://rebind.evil.test:${port}/`);
        const note = page.getByTestId("setup-elsewhere");
        await note.waitFor();
        expect(await note.innerText()).toContain("svc admin create-user");
        expect(await page.getByRole("button", { name: "Create workspace" }).count()).toBe(0);
      });
    } finally {
      await browser.close();
    }
  });

  test("at the configured base_url's host, setup is offered and works", async () => {
    const other = await startEmptyServer({ base_url: "https://svc.example.test" });
    try {
      const c = new WebClient(other.url);
      const headers = { host: "svc.example.test", origin: "https://svc.example.test" };
      expect(await (await c.send("GET", "/api/v1/web/session", undefined, headers)).json()).toMatchObject({ setup_allowed: true });
      // Another name on the same server is not the base_url.
      const wrong = await new WebClient(other.url).send("GET", "/api/v1/web/session", undefined, { host: "svc.example.test.evil.test" });
      expect(await wrong.json()).toMatchObject({ setup_allowed: false });
      const res = await c.send("POST", "/api/v1/web/setup", OWNER, headers);
      expect(res.status).toBe(201);
    } finally {
      await other.stop();
    }
  });
});
