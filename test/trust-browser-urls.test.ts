// Browser steps never show the host's files: only http(s) URLs are saved, URLs are checked again at run time,
// and in the real browser every way a page has to open file:, data:, chrome:, view-source: … is blocked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { guardOf, openGuardedPage } from "../src/runner/navigation-guard";
import { launchBrowser } from "./helpers/browser";
import { createAutomation, json, projectWithEnv, type RunRecord, runToEnd, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const secretDir = tempDir("svc-secret-");
const marker = `svc-marker-${crypto.randomUUID().slice(0, 8)}`;
const FILE_DIR = `file://${secretDir}/`;

/** Pages that try to open the secret directory (or a data: page showing the marker) on their own. */
const TRICKS: Record<string, { html: string; click?: boolean; headers?: Record<string, string> }> = {
  link: { html: `<a id="go" href="${FILE_DIR}">open</a>`, click: true },
  location: { html: `<button id="go" onclick="location.href='${FILE_DIR}'">go</button>`, click: true },
  "meta-refresh": { html: `<meta http-equiv="refresh" content="0;url=${FILE_DIR}">` },
  "refresh-header": { html: "", headers: { refresh: `0;url=${FILE_DIR}` } },
  popup: { html: `<button id="go" onclick="window.open('${FILE_DIR}')">go</button>`, click: true },
  "popup-then-navigate": { html: `<button id="go" onclick="window.open('about:blank').location = '${FILE_DIR}'">go</button>`, click: true },
  iframe: { html: `<iframe src="${FILE_DIR}"></iframe>` },
  data: {
    html: `<button id="go" onclick="location.href = 'data:text/html,' + ['${marker.slice(0, 6)}', '${marker.slice(6)}'].join('')">go</button>`,
    click: true,
  },
  "view-source": { html: `<button id="go" onclick="location.href='view-source:${FILE_DIR}'">go</button>`, click: true },
  chrome: { html: `<button id="go" onclick="location.href='chrome://version'">go</button>`, click: true },
};

let s: TestServer;
let project: string;
let fileBaseProject: string;
let target: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(async () => {
  writeFileSync(join(secretDir, `${marker}.txt`), "a secret next to the database");
  target = Bun.serve({
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/redirect-file") return new Response(null, { status: 302, headers: { location: FILE_DIR } });
      if (path === "/redirect-data") return new Response(null, { status: 302, headers: { location: `data:text/html,${marker}` } });
      const trick = TRICKS[path.replace(/^\/trick\//, "")];
      const html = `<!doctype html><title>trick</title><body><p>a web page</p>${trick?.html ?? ""}</body>`;
      return new Response(html, { headers: { "content-type": "text/html", ...(trick?.headers ?? {}) } });
    },
  });
  base = `http://127.0.0.1:${target.port}`;
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "browser urls", { BASE_URL: base, FILE_URL: FILE_DIR, SCHEME: "file" }));
  ({ project: fileBaseProject } = await projectWithEnv(s, "file base", { BASE_URL: FILE_DIR }));
}, 30_000);

afterAll(async () => {
  await s.stop();
  target.stop(true);
  rmSync(secretDir, { recursive: true, force: true });
});

const browser = (steps: unknown[]) => ({ name: `u-${crypto.randomUUID().slice(0, 8)}`, kind: "browser", environment: "test", steps });
/** What the run says about the page: step messages and the run's error (the step names quote the marker). */
/** The page's HTML once it has stopped navigating (Chromium shows its error page after a refused load). */
async function settledContent(page: Page): Promise<string> {
  for (;;) {
    try {
      return await page.content();
    } catch (e) {
      if (!/is navigating/.test((e as Error).message)) throw e;
      await page.waitForLoadState("load");
    }
  }
}

const shown = (run: RunRecord) => JSON.stringify([run.error, run.steps.map((x) => x.message)]);

describe("refused when saved", () => {
  test("a goto to file:, data:, chrome:, view-source:, javascript:, about: or blob: is a 400 naming the step, and nothing is saved", async () => {
    const before = await json<{ data: unknown[] }>(await s.call("GET", `/projects/${project}/automations?limit=100`));
    for (const bad of [
      "file:///etc/passwd",
      "FILE:///etc/",
      " file:///etc/",
      "fi\tle:///etc/",
      "file:/etc/passwd",
      "data:text/html,hi",
      "chrome://version",
      "view-source:https://example.com",
      "javascript:alert(1)",
      "about:config",
      "about:blank",
      "blob:https://example.com/1",
      "file:///{{X}}",
    ]) {
      const res = await s.call("POST", `/projects/${project}/automations`, browser([{ goto: "/ok" }, { goto: bad }]));
      const body = await json<{ error: string; message: string; details: { path: string; message: string }[] }>(res, 400);
      expect(body.error).toBe("invalid_request");
      expect(body.details).toEqual([{ path: "body.steps.1.goto", message: expect.stringContaining("browser steps open only http and https pages") }]);
    }
    const after = await json<{ data: unknown[] }>(await s.call("GET", `/projects/${project}/automations?limit=100`));
    expect(after.data.length).toBe(before.data.length);
  });

  test("a feature whose page is a file: URL is a 400 naming target.url", async () => {
    const res = await s.call("POST", `/projects/${project}/features`, { name: "local", target: { kind: "web", url: "File:///var/lib/svc/" } });
    const body = await json<{ details: { path: string; message: string }[] }>(res, 400);
    expect(body.details).toEqual([{ path: "body.target.url", message: expect.stringContaining("only http and https") }]);
  });
});

describe("checked at run time", () => {
  test("a URL that becomes file: after {{…}} or by joining a file: BASE_URL stops the run, and no file is shown", async () => {
    for (const [proj, goto] of [
      [project, "{{FILE_URL}}"],
      [project, "{{SCHEME}}://{{FILE_URL}}"],
      [fileBaseProject, "/"],
    ] as const) {
      const run = await runToEnd(s, proj, browser([{ goto }, { expect: { text: marker }, timeout_ms: 500 }, { screenshot: "after" }]));
      expect(run.status).toBe("error");
      expect(run.steps[0]?.status).toBe("error");
      expect(run.steps[0]?.message).toContain("browser steps open only http and https pages");
      expect(run.steps.slice(1).map((x) => x.status)).toEqual(["skipped", "skipped"]);
      expect(shown(run)).not.toContain(marker);
    }
  }, 60_000);

  test("a redirect to file: or data: fails the goto saying why", async () => {
    for (const path of ["/redirect-file", "/redirect-data"]) {
      const run = await runToEnd(s, project, browser([{ goto: path }, { expect: { text: marker }, timeout_ms: 500 }]));
      expect(run.steps[0]?.status).toBe("error");
      expect(run.steps[0]?.message).toContain("redirected to a URL that is not http or https");
      expect(shown(run)).not.toContain(marker);
    }
  }, 60_000);

  test("a page that opens file:, data:, view-source: or chrome: by itself (link, location, refresh, popup, iframe) is blocked and the step says so", async () => {
    const started = await Promise.all(
      Object.entries(TRICKS).map(async ([name, trick]) => {
        const id = await createAutomation(
          s,
          project,
          browser([
            { goto: `/trick/${name}` },
            ...(trick.click ? [{ click: "#go" }] : []),
            { expect: { text: marker }, timeout_ms: 3_000 },
            { screenshot: "after" },
          ]),
        );
        return { name, runId: await startRun(s, project, id) };
      }),
    );
    for (const { name, runId } of started) {
      const run = await waitForRun(s, project, runId, 60_000);
      const blocked = run.steps.find((x) => x.message?.includes("which was blocked: browser steps open only http and https pages"));
      expect({ name, blocked: blocked?.status }).toEqual({ name, blocked: "error" });
      // The marker (the secret file's name, or the data: page's text) never showed on the page.
      expect({ name, passed: run.steps.filter((x) => x.name.includes(marker) && x.status === "passed").length }).toEqual({ name, passed: 0 });
      expect(run.status).not.toBe("passed");
    }
  }, 120_000);
});

describe("blocked in the browser itself", () => {
  let chromium: Browser;
  beforeAll(async () => {
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium.close();
  });

  test("told directly to open a file: URL, a guarded Chromium refuses and shows nothing of the directory", async () => {
    const { context, page } = await openGuardedPage(chromium);
    try {
      const err = await page.goto(FILE_DIR).then(
        () => null,
        (e: Error) => e.message,
      );
      expect(err).toContain("ERR_BLOCKED_BY_CLIENT");
      expect(await settledContent(page)).not.toContain(marker);
      expect(page.url()).not.toStartWith("file:");
      expect(guardOf(page)?.takeBlocked()).toEqual([FILE_DIR]);
    } finally {
      await context.close();
    }
  }, 30_000);

  test("a data: page that got through is blanked at once and reported", async () => {
    const { context, page } = await openGuardedPage(chromium);
    try {
      await page.goto(`data:text/html,<p>${marker}</p>`).catch(() => undefined);
      await page.waitForURL("about:blank");
      expect(await page.content()).not.toContain(marker);
      expect(guardOf(page)?.takeBlocked()).toEqual([`data:text/html,<p>${marker}</p>`]);
    } finally {
      await context.close();
    }
  }, 30_000);

  test("every trick of a page, in every frame and popup: no file content anywhere", async () => {
    for (const [name, trick] of Object.entries(TRICKS)) {
      const { context, page } = await openGuardedPage(chromium);
      try {
        const guard = guardOf(page);
        await page.goto(`${base}/trick/${name}`);
        if (trick.click) await page.click("#go");
        // Wait for the attempt to have been blocked (Chromium's refusal, or the guard's).
        const blocked: string[] = [];
        while (blocked.length === 0) {
          blocked.push(...(guard?.takeBlocked() ?? []));
          if (blocked.length === 0) await page.waitForTimeout(25);
        }
        expect({ name, blocked: blocked[0] }).toEqual({ name, blocked: expect.stringMatching(/^(file|data|view-source|chrome):/) });
        for (const p of context.pages()) {
          expect({ name, url: p.url() }).toEqual({ name, url: expect.stringMatching(/^(http:|about:blank)/) });
          // A frame whose load was refused has no document to read (its URL stays empty).
          for (const f of p.frames().filter((x) => x.url() !== "")) {
            expect({ name, frame: f.url(), leaked: (await f.content()).includes(marker) }).toEqual({ name, frame: f.url(), leaked: false });
            expect(f.url()).toMatch(/^(http:|about:blank)/);
          }
        }
      } finally {
        await context.close();
      }
    }
  }, 60_000);
});
