// Every page of the web application (each route of src/web/routes.tsx, the sign-in and the first-run pages), in
// Chromium at 1280 and 390 px, over records whose names are 185 characters without a break: each has an <h1>, a
// document title naming it, no horizontal scrolling, no serious or critical axe-core violation and no
// Content-Security-Policy violation. A member sees no action only owners and admins may take.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner, startEmptyServer } from "./helpers/browser";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";

setDefaultTimeout(180_000);

const AXE = readFileSync(join(import.meta.dir, "..", "node_modules", "axe-core", "axe.min.js"), "utf8");
const ROUTES = [...readFileSync(join(import.meta.dir, "..", "src", "web", "routes.tsx"), "utf8").matchAll(/^\s*\["(\/[^"]*)",/gm)].map((m) => m[1] ?? "");
/** A name with no place to break a line. */
const LONG = `Checkout${"x".repeat(177)}`;

let s: TestServer;
let browser: Browser;
const ids: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const target = `${s.url}/api/v1/web/session`;
  const { project, envId } = await projectWithEnv(s, LONG, { BASE_URL: s.url });
  ids.project = project;
  ids.feature = (await json<{ id: string }>(await s.call("POST", `/projects/${project}/features`, { name: LONG }), 201)).id;
  ids.automation = await createAutomation(s, project, {
    name: LONG,
    kind: "http",
    environment: envId,
    // A long document and a failed equality of two documents: the page's excerpt and diff scroll, and wrap.
    steps: [
      {
        name: LONG,
        request: { method: "GET", url: `${s.url}/api/v1/openapi.json` },
        expect: [{ status: 200 }, { json: "$.info", equals: { title: LONG, version: "1", a: 1, b: 2, c: 3 } }],
      },
    ],
  });
  // A draft beside it: its badge is on the automations page too.
  await createAutomation(s, project, { name: `${LONG} draft`, kind: "http", status: "draft", steps: [{ request: { method: "GET", url: target } }] });
  ids.run = await startRun(s, project, ids.automation);
  await waitForRun(s, project, ids.run);
  const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: LONG, automation_ids: [ids.automation] }), 201);
  ids.group = group.id;
  ids.groupRun = (await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202)).id;
  await waitUntilAsync(async () => {
    const gr = await json<{ status: string }>(await s.call("GET", `/projects/${project}/group-runs/${ids.groupRun}`));
    return gr.status !== "queued" && gr.status !== "running";
  }, 30_000);
  await s.call("POST", "/keys", { name: LONG });
  await s.userWithKey("member@acme.test", "acme", "member");
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** A route's pattern filled with the records made above. */
function address(pattern: string): string {
  const filled = pattern.replace(/\/:(\w+)/g, (_all, name: string, offset: number) => {
    const before = pattern.slice(0, offset);
    const key =
      name === "project"
        ? "project"
        : name === "feature"
          ? "feature"
          : before.endsWith("/automations")
            ? "automation"
            : before.endsWith("/runs")
              ? "run"
              : before.endsWith("/group-runs")
                ? "groupRun"
                : before.endsWith("/groups")
                  ? "group"
                  : "";
    const id = ids[key];
    if (!id) throw new Error(`this test does not know what to show at ${pattern}: add a record for :${name} to it`);
    return `/${id}`;
  });
  return `/#${filled}`;
}

/** Watches a page for Content-Security-Policy violations (the event and the console's report of one). */
async function watchPolicy(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|CSP violation/i.test(m.text())) violations.push(m.text());
  });
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`),
    );
  });
  return violations;
}

/** What the page shows once it has settled: its h1 and title, how much wider it is than the window, and axe's findings. */
async function inspect(page: Page): Promise<{ h1: string[]; title: string; overflow: number; violations: string[] }> {
  await page.locator("main").first().waitFor();
  await page.waitForFunction(() => !/Loading/.test(document.body.innerText));
  await page.waitForLoadState("networkidle");
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(ctx: Document, o: object): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const r = await axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map(
        (v) =>
          `${v.impact} ${v.id}: ${v.help} (${v.nodes
            .map((n) => n.target.join(" "))
            .slice(0, 3)
            .join(", ")})`,
      );
  });
  return {
    h1: (await page.locator("h1").allInnerTexts()).map((t) => t.trim()),
    title: await page.title(),
    overflow: await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    violations,
  };
}

for (const width of [1280, 390]) {
  test(`every signed-in page at ${width} px: an h1, a title naming it, no horizontal scroll, no axe or policy violation`, async () => {
    expect(ROUTES.length).toBeGreaterThan(10);
    const { page, context } = await newPage(browser, width);
    const policy = await watchPolicy(page);
    await signInAsOwner(page, s.url);
    const found: Record<string, unknown> = {};
    for (const route of ROUTES) {
      await explained(page, `every-page-${route.replace(/\W+/g, "-")}`, async () => {
        await page.goto(`${s.url}${address(route)}`);
        const seen = await inspect(page);
        const problems = [
          ...(seen.h1.length === 1 && seen.h1[0] ? [] : [`h1: ${JSON.stringify(seen.h1)}`]),
          ...(seen.title !== "svc" && seen.title.startsWith(seen.h1[0]?.slice(0, 60) ?? "\u0000") ? [] : [`title: ${seen.title}`]),
          ...(seen.overflow <= 0 ? [] : [`wider than the window by ${seen.overflow} px`]),
          ...seen.violations,
        ];
        if (problems.length) found[route] = problems;
      });
    }
    // The run page with its steps' requests and responses open (scrolling excerpts) is checked too.
    await explained(page, "every-page-run-opened", async () => {
      await page.goto(`${s.url}${address("/p/:project/runs/:id")}`);
      await page.locator("h1").waitFor();
      for (const summary of await page.getByText("Request and response").all()) await summary.click();
      await page.locator("details pre.excerpt").first().waitFor();
      const seen = await inspect(page);
      if (seen.violations.length || seen.overflow > 0) found["run page, excerpts open"] = [...seen.violations, `overflow ${seen.overflow}`];
    });
    await shot(page, "every-page-long-names-run");
    await page.goto(`${s.url}${address("/p/:project/automations/:id")}`);
    await page.locator("h1").waitFor();
    await shot(page, "every-page-long-names-automation");
    expect(found).toEqual({});
    expect(policy).toEqual([]);
    await context.close();
  });
}

test("the sign-in and first-run pages: an h1, a title, no axe or policy violation", async () => {
  const empty = await startEmptyServer();
  const { page, context } = await newPage(browser, 390);
  try {
    const policy = await watchPolicy(page);
    for (const [url, heading] of [
      [s.url, "Sign in"],
      [empty.url, "Set up svc"],
    ] as const) {
      await explained(page, `every-page-signed-out-${heading}`, async () => {
        await page.goto(url);
        const seen = await inspect(page);
        expect(seen.h1.length).toBe(1);
        expect(seen.title).not.toBe("svc");
        expect(seen.title.startsWith(seen.h1[0] ?? "\u0000")).toBe(true);
        expect(seen.violations).toEqual([]);
        expect(seen.overflow).toBeLessThanOrEqual(0);
      });
    }
    expect(policy).toEqual([]);
  } finally {
    await context.close();
    await empty.stop();
  }
});

test("a member sees no action only owners and admins may take", async () => {
  const { page, context } = await newPage(browser);
  await explained(page, "every-page-member", async () => {
    await signInAsOwner(page, s.url, "member@acme.test");
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.getByRole("link").allInnerTexts()).toEqual(["Dashboard", "Projects", "CLI & API keys"]);
    await page.goto(`${s.url}${address("/p/:project")}`);
    await page.locator("h1").waitFor();
    await page.getByText("Recent runs").waitFor();
    expect(await page.getByRole("button", { name: "Delete project" }).count()).toBe(0);
    await page.goto(`${s.url}/#/members`);
    await page.locator("h1").waitFor();
    await page.locator("tr[data-member='member@acme.test']").waitFor();
    expect(await page.getByRole("button", { name: "Add member" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Remove" }).count()).toBe(0);
    expect(await page.locator("select[aria-label^='Role of']").count()).toBe(0);
    await page.goto(`${s.url}/#/settings/runners`);
    await page.getByText("Only owners and admins").waitFor();
    expect(await page.getByRole("button", { name: "Create runner token" }).count()).toBe(0);
  });
  await context.close();
});
