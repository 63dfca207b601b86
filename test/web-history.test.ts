// The web app's pictures of history in headless Chromium against a real server and real runs, at 1280 and 390 px:
// the dashboard's headline (share of automations passing now, flaky apart), a project's trend chart and its
// automations failing or flaky now, and an automation's timeline of runs (retries marked), each described in text
// and as a table for screen readers; with no finished run, a sentence instead of empty axes.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner } from "./helpers/browser";
import { createAutomation, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(90_000);

let s: TestServer;
let browser: Browser;
let target: ReturnType<typeof Bun.serve>;
let project: string;
let alternating: string;
const statusOf = new Map<string, number>();
const tries = new Map<string, number>();

beforeAll(async () => {
  target = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const key = new URL(req.url).pathname.slice(1);
      const n = (tries.get(key) ?? 0) + 1;
      tries.set(key, n);
      if (key === "retry") return new Response(null, { status: n === 1 ? 500 : 200 });
      return new Response(null, { status: statusOf.get(key) ?? 200 });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  let envId: string;
  ({ project, envId } = await projectWithEnv(s, "Charts", { BASE_URL: `http://127.0.0.1:${target.port}` }));
  const on = (key: string, extra: Record<string, unknown> = {}) =>
    createAutomation(s, project, {
      name: key,
      kind: "http",
      environment: envId,
      steps: [{ request: { url: `/${key}` }, expect: [{ status: 200 }] }],
      ...extra,
    });
  const run = async (id: string) => waitForRun(s, project, await startRun(s, project, id));
  alternating = await on("alternating");
  for (const code of [200, 500, 200, 500]) {
    statusOf.set("alternating", code);
    await run(alternating);
  }
  // One more: fails its first attempt, passes its retry.
  await run(await on("retry", { retries: 1 }));
  await run(await on("steady"));
  statusOf.set("broken", 500);
  await run(await on("broken"));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await s.stop();
  target.stop(true);
});

/** The page does not scroll sideways: everything fits the viewport's width. */
async function fitsWidth(page: Page): Promise<void> {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll).toBeLessThanOrEqual(width);
}

for (const width of [1280, 390]) {
  test(`dashboard headline, project trend and failing-now list, automation timeline at ${width} px`, async () => {
    const { context, page } = await newPage(browser, width);
    try {
      await explained(page, `history-${width}`, async () => {
        await signInAsOwner(page, s.url);
        // 4 automations ran: steady passes; alternating and retry are flaky; broken fails.
        const tile = page.locator(`[data-project='${project}']`);
        await tile.getByTestId("pass-rate").getByText("25% passing now").waitFor();
        expect(await tile.getByTestId("health-counts").innerText()).toBe("1 of 4 automations passing by their latest run · 2 flaky · 1 failing");
        await fitsWidth(page);
        await shot(page, "history-dashboard");

        await page.goto(`${s.url}/#/p/${project}`);
        const trend = page.getByRole("figure", { name: "Trend of pass rate and duration per day" });
        await trend.locator("canvas").first().waitFor();
        const box = await trend.locator(".uplot").boundingBox();
        expect(box && box.width > 150 && box.x + box.width <= width).toBe(true);
        expect(await trend.locator("figcaption").innerText()).toMatch(
          // Every run was today: the day is named once.
          /^Over the last 30 days: 7 runs, 57% passed, median duration .+\. Pass rate 57% on \d{4}-\d\d-\d\d\.$/,
        );
        await trend.getByText("Show as table").click();
        const today = new Date().toISOString().slice(0, 10);
        expect(await trend.getByTestId("trend-table").locator("tbody tr").allInnerTexts()).toEqual([
          expect.stringMatching(new RegExp(`^${today}\\s+7\\s+4\\s+57%`)),
        ]);
        const failing = page.getByTestId("failing-now");
        expect((await failing.locator("li a").allInnerTexts()).sort()).toEqual(["alternating", "broken", "retry"]);
        await fitsWidth(page);
        await shot(page, "history-project");

        await page.goto(`${s.url}/#/p/${project}/automations/${alternating}`);
        await page.getByTestId("health").getByText("flaky").waitFor();
        const timeline = page.getByRole("figure", { name: "Timeline of runs: status by colour, duration as height" });
        await timeline.locator("canvas").first().waitFor();
        expect(await timeline.locator("figcaption").innerText()).toMatch(/^Last 4 runs, oldest first: 2 passed, 2 failed\. Latest failed in /);
        await timeline.getByText("Show as table").click();
        expect(await timeline.getByTestId("timeline-table").locator("tbody tr td:nth-child(3)").allInnerTexts()).toEqual([
          "passed",
          "failed",
          "passed",
          "failed",
        ]);
        const tbox = await timeline.locator(".uplot").boundingBox();
        expect(tbox && tbox.x + tbox.width <= width).toBe(true);
        await fitsWidth(page);
        await shot(page, "history-automation");
      });
    } finally {
      await context.close();
    }
  });
}

test("a retried run is marked on its automation's timeline", async () => {
  const { context, page } = await newPage(browser, 1280);
  try {
    await explained(page, "history-retry", async () => {
      await signInAsOwner(page, s.url);
      await page.goto(`${s.url}/#/p/${project}/automations/retry`);
      const timeline = page.getByRole("figure", { name: "Timeline of runs: status by colour, duration as height" });
      expect(await timeline.locator("figcaption").innerText()).toMatch(/^Last 1 run, oldest first: 1 passed, 0 failed, 1 needed a retry\./);
      await timeline.getByText("Show as table").click();
      expect(await timeline.getByTestId("timeline-table").locator("tbody tr td:nth-child(5)").allInnerTexts()).toEqual(["2"]);
      // The legend names the retry marker.
      await timeline.locator(".u-legend").getByText("Retried").waitFor();
    });
  } finally {
    await context.close();
  }
});

test("a project and an automation with no finished run say so instead of drawing empty axes", async () => {
  const { context, page } = await newPage(browser, 1280);
  try {
    await explained(page, "history-empty", async () => {
      await signInAsOwner(page, s.url);
      const { project: quiet, envId } = await projectWithEnv(s, "Quiet", { BASE_URL: `http://127.0.0.1:${target.port}` });
      const never = await createAutomation(s, quiet, { name: "never ran", kind: "http", environment: envId, steps: [{ request: { url: "/steady" } }] });

      await page.goto(`${s.url}/#/p/${quiet}`);
      const trend = page.locator(".card", { has: page.getByRole("heading", { name: "Trend (30 days)" }) });
      await trend.getByText("No finished runs in the last 30 days.").waitFor();
      expect(await trend.getByRole("figure").count()).toBe(0);
      expect(await trend.locator("canvas").count()).toBe(0);

      await page.goto(`${s.url}/#/p/${quiet}/automations/${never}`);
      const timeline = page.locator(".card", { has: page.getByRole("heading", { name: "Timeline of runs" }) });
      await timeline.getByText("No finished runs yet.").waitFor();
      expect(await timeline.getByRole("figure").count()).toBe(0);
      expect(await timeline.locator("canvas").count()).toBe(0);
      await shot(page, "history-empty-automation");
    });
  } finally {
    await context.close();
  }
});

test("a project with more automations than one page of the API is counted and listed whole: health, failing now, the automations list", async () => {
  const big = await projectWithEnv(s, "Big", { BASE_URL: `http://127.0.0.1:${target.port}` });
  statusOf.set("big-broken", 500);
  const ids: string[] = [];
  // One page of the API is at most 200 items: 201 automations, the one that fails created first (the oldest).
  for (const key of ["big-broken", ...Array.from({ length: 200 }, (_, i) => `big-${i}`)]) {
    ids.push(
      await createAutomation(s, big.project, {
        name: key,
        kind: "http",
        environment: big.envId,
        steps: [{ request: { url: `/${key}` }, expect: [{ status: 200 }] }],
      }),
    );
  }
  const group = (await (await s.call("POST", `/projects/${big.project}/groups`, { name: "all", automation_ids: ids })).json()) as { id: string };
  const started = (await (await s.call("POST", `/projects/${big.project}/groups/${group.id}/run`, {})).json()) as { id: string };
  let status = "queued";
  while (status === "queued" || status === "running")
    status = ((await (await s.call("GET", `/projects/${big.project}/group-runs/${started.id}?wait=30`)).json()) as { status: string }).status;
  expect(status).toBe("failed");
  const { context, page } = await newPage(browser, 1280);
  try {
    await explained(page, "history-big", async () => {
      await signInAsOwner(page, s.url);
      const tile = page.locator(`[data-project='${big.project}']`);
      await tile.getByTestId("pass-rate").getByText("100% passing now").waitFor();
      expect(await tile.getByTestId("health-counts").innerText()).toBe("200 of 201 automations passing by their latest run · 0 flaky · 1 failing");
      await page.goto(`${s.url}/#/p/${big.project}`);
      await page.getByTestId("failing-now").locator("li a").first().waitFor();
      expect(await page.getByTestId("failing-now").locator("li a").allInnerTexts()).toEqual(["big-broken"]);
      await page.goto(`${s.url}/#/p/${big.project}/automations`);
      await page.getByRole("link", { name: "big-broken", exact: true }).waitFor();
      expect(await page.getByRole("link", { name: /^big-/ }).count()).toBe(201);
    });
  } finally {
    await context.close();
  }
});

test("an idle dashboard reads again by itself (a wall screen): one request a refresh, a run ended elsewhere shows within 20 s", async () => {
  const { context, page } = await newPage(browser, 1280);
  const reads: string[] = [];
  page.on("request", (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith("/api/v1/ops/")) reads.push(path.slice("/api/v1/ops".length));
  });
  try {
    await explained(page, "history-dashboard-live", async () => {
      await signInAsOwner(page, s.url);
      const tile = page.locator(`[data-project='${project}']`);
      await tile.getByTestId("health-counts").waitFor();
      const before = await tile.getByTestId("health-counts").innerText();
      // Nothing is running: the page would not have read again before this refresh existed.
      statusOf.set("late", 500);
      const late = await createAutomation(s, project, {
        name: "late",
        kind: "http",
        environment: "test",
        steps: [{ request: { url: "/late" }, expect: [{ status: 200 }] }],
      });
      await waitForRun(s, project, await startRun(s, project, late));
      reads.length = 0;
      const waited = performance.now();
      await page.getByRole("link", { name: "late", exact: true }).waitFor({ timeout: 30_000 });
      // Not sooner than its idle pace: the page was loaded before the run, and nothing ran since.
      expect(performance.now() - waited).toBeGreaterThan(5_000);
      expect(await tile.getByTestId("health-counts").innerText()).not.toBe(before);
      // The whole dashboard in one read, not two per project.
      expect(reads.filter((r) => r !== "/dashboard")).toEqual([]);
    });
  } finally {
    await context.close();
  }
});

test("the dashboard shows the first 50 projects and says that there are more, linking to them all", async () => {
  for (let i = 0; i < 50; i++) expect((await s.call("POST", "/projects", { name: `Many ${i}` })).status).toBe(201);
  const { context, page } = await newPage(browser, 1280);
  try {
    await explained(page, "history-many-projects", async () => {
      await signInAsOwner(page, s.url);
      await page.getByTestId("more-projects").getByText("The first 50 projects are shown").waitFor();
      expect(await page.locator("[data-project]").count()).toBe(50);
      await page.getByTestId("more-projects").getByRole("link", { name: "see every project" }).click();
      await page.getByText("many-49 ·").waitFor();
    });
  } finally {
    await context.close();
  }
});
