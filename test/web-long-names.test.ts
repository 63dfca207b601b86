// Tables beside a very long name, in headless Chromium against a real server at 1280 px: an automation and a feature
// named with 200 characters and no place to break wrap inside their cells, the page never scrolls sideways, and the
// table's own words (its headers, kinds, sources, times, step counts) are not cut in the middle to make room.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner } from "./helpers/browser";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

const LONG = `Checkout${"x".repeat(192)}`;

let s: TestServer;
let browser: Browser;
let page: Page;
let project = "";

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  let envId = "";
  ({ project, envId } = await projectWithEnv(s, "Long names", { BASE_URL: s.url }));
  const feature = await json<{ id: string }>(await s.call("POST", `/projects/${project}/features`, { name: LONG }), 201);
  const automation = await createAutomation(s, project, {
    name: LONG,
    kind: "http",
    environment: envId,
    feature: feature.id,
    steps: [{ request: { method: "GET", url: "/api/v1/web/session" } }],
  });
  await waitForRun(s, project, await startRun(s, project, automation));
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** How the first table of the page is laid out: how much wider than the window the page is and than its box the
 * table is, how many lines the long name takes, and the words of the given columns and the headers split over two lines. */
function layout(columns: string[]) {
  return page.evaluate((labels) => {
    const table = document.querySelector("table");
    if (!table?.parentElement) throw new Error("no table on the page");
    /** The words of an element's text that start on one line and end on another. */
    const splitWords = (el: Element): string[] => {
      const split: string[] = [];
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of (node.textContent ?? "").matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (lines.size > 1) split.push(word[0]);
        }
      }
      return split;
    };
    const cells = [...table.querySelectorAll("th"), ...labels.flatMap((l) => [...table.querySelectorAll(`td[data-label='${l}']`)])];
    const name = [...table.querySelectorAll("td a")].find((a) => a.textContent?.startsWith("Checkout"));
    const nameLines = name ? new Set([...name.getClientRects()].map((r) => Math.round(r.top))).size : 0;
    return {
      pageOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      tableOverflow: table.getBoundingClientRect().width - table.parentElement.clientWidth,
      nameLines,
      splitWords: cells.flatMap(splitWords),
    };
  }, columns);
}

/** No sideways scroll of the page or the table, the long name wrapped, and no other word cut in two. */
function expectTidy(seen: Awaited<ReturnType<typeof layout>>): void {
  expect(seen.pageOverflow).toBeLessThanOrEqual(0);
  expect(seen.tableOverflow).toBeLessThanOrEqual(0);
  expect(seen.nameLines).toBeGreaterThan(1);
  expect(seen.splitWords).toEqual([]);
}

test("the automations list beside a 200-character name: no sideways scroll, the name wraps, the other words stay whole", () =>
  explained(page, "long-names-automations", async () => {
    await page.goto(`${s.url}/#/p/${project}/automations`);
    await page.locator("tr[data-automation] .badge-passed").waitFor();
    expectTidy(await layout(["Kind", "Source", "Updated"]));
    await shot(page, "long-names-automations");
  }));

test("the runs list of an automation with a 200-character name: no sideways scroll, the other words stay whole", () =>
  explained(page, "long-names-runs", async () => {
    await page.goto(`${s.url}/#/p/${project}/runs`);
    await page.locator("tr[data-run-id] .badge-passed").waitFor();
    expectTidy(await layout(["Started", "Duration", "Steps"]));
    await shot(page, "long-names-runs");
  }));
