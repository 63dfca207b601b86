// The run pages in headless Chromium against a real server and run engine: each assertion's expectation with its
// operator, a line diff where a JSON equality failed, the response body before its headers, a step that ended in an
// error counted apart from failed ones, the step a running run is at, a run cancelled from its page that then shows
// its stopped steps, a group run cancelled from its page, and run lists that show runs started elsewhere (by CI
// through the API) without a reload, stay readable in an automation's side card, underline no space between badges,
// and count steps honestly (how far a running run got, no count for a queued one, an error apart from failures).
// For keyboards and screen readers: each assertion's result in words, a run's and a group run's status announced
// when it changes, the focus kept on that status after cancelling; a group run lists its failures first.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Locator, Page } from "playwright-core";
import { explained, launchBrowser, newPage, shot, signInAsOwner, watch } from "./helpers/browser";
import { runnerCall } from "./helpers/remote-runner";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let browser: Browser;
let page: Page;
let target: ReturnType<typeof Bun.serve>;
let project = "";
let envId = "";
let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});
/** Requests to /stuck wait until the end of the file: runs that only a cancel ends. */
let unstick: () => void = () => {};
const stuck = new Promise<void>((resolve) => {
  unstick = resolve;
});

const flakyAsked = new Set<string>();

beforeAll(async () => {
  target = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      // An id sent as a string: an assertion expecting the number 7 fails on it.
      if (path === "/order") return Response.json({ id: "7", count: 2 });
      if (path === "/product") return Response.json({ id: 7, name: "pear", price: 3, tags: ["fruit"] }, { headers: { "x-kind": "fruit" } });
      if (path === "/held") {
        await held;
        return Response.json({ ok: true });
      }
      // Fails the first time each ?key is asked, then answers: a run with a retry passes on its second attempt.
      if (path === "/flaky") {
        const key = new URL(req.url).searchParams.get("key") ?? "";
        if (!flakyAsked.has(key)) {
          flakyAsked.add(key);
          return new Response("not yet", { status: 503 });
        }
        return Response.json({ ok: true });
      }
      if (path === "/stuck") {
        await stuck;
        return Response.json({ ok: true });
      }
      return new Response("no such page", { status: 404 });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project, envId } = await projectWithEnv(s, "Shop", { BASE_URL: `http://127.0.0.1:${target.port}` }));
  browser = await launchBrowser();
  ({ page } = await newPage(browser));
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  release();
  unstick();
  await browser?.close();
  await s?.stop();
  target?.stop(true);
});

test("the Expected column shows subject and operator, a failed JSON equality shows a diff, the body comes before the headers", () =>
  explained(page, "run-page-expectations", async () => {
    const automation = await createAutomation(s, project, {
      name: "product is cheap",
      kind: "http",
      environment: envId,
      steps: [
        {
          name: "read the product",
          request: { method: "GET", url: "/product" },
          expect: [{ status: 200 }, { json: "$.price", lt: 3 }, { json: "$", equals: { id: 7, name: "apple", price: 3, tags: ["fruit"] } }],
        },
      ],
    });
    const runId = await startRun(s, project, automation);
    expect((await waitForRun(s, project, runId)).status).toBe("failed");
    await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
    const step = page.locator("li.step[data-step='0']");
    const table = step.locator("table");
    await table.waitFor();
    expect(await table.locator("thead th").allTextContents()).toEqual(["Result", "Expected", "Actual"]);
    const expected = await table.locator("td[data-label='Expected']").allInnerTexts();
    expect(expected).toEqual(["status == 200", "$.price < 3", '$ == {"id":7,"name":"apple","price":3,"tags":["fruit"]}']);
    expect(await table.locator("td[data-label='Actual'] > code").allInnerTexts()).toEqual(["200", "3", '{"id":7,"name":"pear","price":3,"tags":["fruit"]}']);

    // Only the failed equality of two documents has a diff: the expected line removed, the actual one added.
    const diff = table.getByTestId("json-diff");
    expect(await diff.count()).toBe(1);
    expect(await diff.locator(".diff-removed").allInnerTexts()).toEqual(['-   "name": "apple",']);
    expect(await diff.locator(".diff-added").allInnerTexts()).toEqual(['+   "name": "pear",']);
    expect(await diff.locator(".diff-same").count()).toBeGreaterThan(3);

    await step.getByText("Request and response").click();
    const response = await step.locator("details pre.excerpt").nth(1).innerText();
    const lines = response.split("\n");
    expect(lines[0]).toBe("200");
    const body = response.indexOf('"name": "pear"');
    const header = response.indexOf("x-kind: fruit");
    expect(body).toBeGreaterThan(0);
    expect(header).toBeGreaterThan(body);
    await shot(page, "run-page-expectations");
  }));

test("a step that could not reach its URL is counted as an error, apart from the failed ones", () =>
  explained(page, "run-page-error-step", async () => {
    // A port nothing listens on any more: the step's request is refused, and the step ends in an error.
    const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const closed = `http://127.0.0.1:${gone.port}`;
    gone.stop(true);
    const automation = await createAutomation(s, project, {
      name: "reaches a stopped service",
      kind: "http",
      environment: envId,
      steps: [
        { name: "read the product", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "call the stopped service", request: { method: "GET", url: `${closed}/orders` }, expect: [{ status: 200 }] },
        { name: "read it again", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
      ],
    });
    const run = await waitForRun(s, project, await startRun(s, project, automation));
    expect(run.steps.map((x) => x.status)).toEqual(["passed", "error", "skipped"]);
    // The API's summary has no place for an error: it counts the step as failed.
    expect(run.summary).toEqual({ steps: 3, passed: 1, failed: 1, skipped: 1 });
    await page.goto(`${s.url}/#/p/${project}/runs/${run.id}`);
    await page.locator("li.step-error[data-step='1']").waitFor();
    expect(await page.getByTestId("run-step-counts").innerText()).toBe("1 passed · 0 failed · 1 error · 1 skipped");
  }));

test("a running run shows the step it is at, live, until it ends", () =>
  explained(page, "run-page-current-step", async () => {
    const automation = await createAutomation(s, project, {
      name: "waits at the gate",
      kind: "http",
      environment: envId,
      steps: [
        { name: "read the product", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "wait for the gate", request: { method: "GET", url: "/held" }, expect: [{ status: 200 }] },
        { name: "read it again", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
      ],
    });
    const runId = await startRun(s, project, automation);
    await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
    const current = page.getByTestId("current-step");
    // The first step's result is recorded while the second waits at the gate: the page says where the run is.
    await page.locator("li.step-passed[data-step='0']").waitFor({ timeout: 20_000 });
    await current.getByText("2. wait for the gate").waitFor();
    expect(await current.locator(".badge").innerText()).toBe("RUNNING");
    await shot(page, "run-page-current-step");
    release();
    await page.getByTestId("run-status").getByText("passed").waitFor({ timeout: 20_000 });
    await current.waitFor({ state: "detached" });
    expect(await page.locator("li.step-passed").count()).toBe(3);
  }));

test("a run cancelled from its page shows the results of its stopped steps, recorded a moment after it turned cancelled, and where it was stopped", () =>
  explained(page, "run-page-cancel-results", async () => {
    const automation = await createAutomation(s, project, {
      name: "five steps, stuck at the second",
      kind: "http",
      environment: envId,
      steps: [
        { name: "read the product", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "wait forever", request: { method: "GET", url: "/stuck", timeout_ms: 60_000 }, expect: [{ status: 200 }] },
        { name: "read it again", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "and again", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "and once more", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
      ],
    });
    const runId = await startRun(s, project, automation);
    await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
    // Cancelled while its second step waits: the page first reads it cancelled with only the first step's result.
    await page.locator("li.step-passed[data-step='0']").waitFor({ timeout: 20_000 });
    await page.getByTestId("current-step").getByText("2. wait forever").waitFor();
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.getByTestId("run-status").getByText("cancelled").waitFor({ timeout: 10_000 });
    // The engine then records where each step was stopped…
    for (let i = 0; ; i++) {
      const run = await json<{ summary: { steps: number } }>(await s.call("GET", `/projects/${project}/runs/${runId}`));
      if (run.summary.steps === 5) break;
      if (i > 200) throw new Error("the stopped steps were never recorded");
      await Bun.sleep(50);
    }
    // …and the open page shows them without a reload.
    await page.getByTestId("run-step-counts").getByText("1 passed · 0 failed · stopped at step 2 · 3 skipped").waitFor({ timeout: 10_000 });
    expect(await page.locator("li.step[data-step]").count()).toBe(5);
    expect(await page.locator("li.step-error[data-step='1']").count()).toBe(1);
    await shot(page, "run-page-cancel-results");
  }));

test("a cancelled run's page follows it until its runner has recorded the stopped steps a moment later", () =>
  explained(page, "run-page-cancel-late-results", async () => {
    // Played by the test, the runner records the stopped steps only once the page has shown the run cancelled.
    const env = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/environments`, {
        name: "remote",
        variables: { BASE_URL: `http://127.0.0.1:${target.port}` },
        runner_labels: ["played-by-test"],
      }),
      201,
    );
    const { token } = await json<{ token: string }>(await s.call("POST", "/runners", { name: "played" }), 201);
    await json(await runnerCall(s.url, token, "/hello", { protocol: 1, version: "test", labels: ["played-by-test"], capabilities: { browser: false } }));
    const names = ["read the product", "wait a while", "read it again", "and again", "and once more"];
    const automation = await createAutomation(s, project, {
      name: "five steps on a runner",
      kind: "http",
      environment: env.id,
      steps: names.map((name) => ({ name, request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] })),
    });
    const runId = await startRun(s, project, automation);
    const job = (await json<{ jobs: { id: string; claim: number }[] }>(await runnerCall(s.url, token, "/claim", { slots: 1, wait_ms: 5_000 }))).jobs[0];
    expect(job?.id).toBe(runId);
    const ref = { id: runId, claim: job?.claim ?? 0 };
    await json(await runnerCall(s.url, token, "/start", { runs: [ref] }));
    const attempt = { attempt: 1, status: "cancelled", error: "cancelled by request", message: "cancelled by request", duration_ms: 10 };
    const step = (index: number, status: string, message: string | null = null) => ({ index, name: names[index], status, duration_ms: 5, message });
    const progress = { steps: [step(0, "passed")], summary: { steps: 1, passed: 1, failed: 0, skipped: 0 }, attempts: [] };
    await json(await runnerCall(s.url, token, "/heartbeat", { runs: [{ ...ref, progress }], wait_ms: 0 }));

    await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
    await page.locator("li.step-passed[data-step='0']").waitFor({ timeout: 20_000 });
    await page.getByRole("button", { name: "Cancel run" }).click();
    await page.getByTestId("run-status").getByText("cancelled").waitFor({ timeout: 10_000 });
    // Read cancelled before its runner stopped: only the first step's result so far.
    expect(await page.getByTestId("run-step-counts").innerText()).toBe("1 passed · 0 failed · 0 skipped");

    const beat = await json<{ cancelled: string[] }>(await runnerCall(s.url, token, "/heartbeat", { runs: [ref], wait_ms: 0 }));
    expect(beat.cancelled).toEqual([runId]);
    const stopped = [step(0, "passed"), step(1, "error", "cancelled by request"), step(2, "skipped"), step(3, "skipped"), step(4, "skipped")];
    const result = {
      status: "cancelled",
      error: "cancelled by request",
      summary: { steps: 5, passed: 1, failed: 1, skipped: 3 },
      steps: stopped,
      artifacts: [],
      attempts: [attempt],
    };
    expect((await json<{ recorded: string[] }>(await runnerCall(s.url, token, "/finish", { runs: [{ ...ref, result }] }))).recorded).toEqual([runId]);

    // The open page shows them without a reload.
    await page.getByTestId("run-step-counts").getByText("1 passed · 0 failed · stopped at step 2 · 3 skipped").waitFor({ timeout: 10_000 });
    expect(await page.locator("li.step[data-step]").count()).toBe(5);
  }));

test("an unfinished group run's page offers Cancel group run: every run ends cancelled, and so does the group run", () =>
  explained(page, "group-run-cancel", async () => {
    const ids: string[] = [];
    for (const name of ["stuck one", "stuck two"])
      ids.push(
        await createAutomation(s, project, {
          name,
          kind: "http",
          environment: envId,
          steps: [{ name: "wait forever", request: { method: "GET", url: "/stuck", timeout_ms: 60_000 }, expect: [{ status: 200 }] }],
        }),
      );
    const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "stuck pair", automation_ids: ids }), 201);
    const groupRun = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
    await page.goto(`${s.url}/#/p/${project}/group-runs/${groupRun.id}`);
    const cancel = page.getByRole("button", { name: "Cancel group run" });
    await cancel.waitFor({ timeout: 20_000 });
    await shot(page, "group-run-cancel-offered");
    // Announced when it changes (it ends without a reload).
    expect(await page.getByTestId("group-run-status").getAttribute("aria-live")).toBe("polite");
    await cancel.click();
    await page.getByTestId("group-run-status").getByText("cancelled").waitFor({ timeout: 10_000 });
    // The button is gone: the focus is on the status it changed, not lost to the top of the page.
    expect(await page.getByTestId("group-run-status").evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await page.getByTestId("group-run-results").innerText()).toBe("0 passed · 0 failed · 2 cancelled");
    // Ended, it offers no cancel any more (Run again instead), and every run in its table shows cancelled.
    await cancel.waitFor({ state: "detached" });
    expect(await page.locator("tr[data-run-id] .badge-cancelled").count()).toBe(2);
    const read = await json<{ status: string; runs: { status: string }[] }>(await s.call("GET", `/projects/${project}/group-runs/${groupRun.id}`));
    expect(read.status).toBe("cancelled");
    expect(read.runs.map((r) => r.status)).toEqual(["cancelled", "cancelled"]);
    await shot(page, "group-run-cancelled");
    // Once their stopped steps are recorded, the runs list says where each was stopped, not "1 failed".
    const runIds = read.runs.map((r) => (r as { id?: string }).id ?? "");
    for (let i = 0; ; i++) {
      const runs = await Promise.all(runIds.map(async (id) => json<{ summary: { steps: number } }>(await s.call("GET", `/projects/${project}/runs/${id}`))));
      if (runs.every((r) => r.summary.steps > 0)) break;
      if (i > 100) throw new Error("the stopped steps were never recorded");
      await Bun.sleep(100);
    }
    await page.goto(`${s.url}/#/p/${project}/runs`);
    for (const id of runIds) {
      const row = page.locator(`tr[data-run-id='${id}']`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.locator('[data-label="Steps"]').innerText()).toBe("0/1 · stopped at step 1");
    }
  }));

test("the runs list and a group's runs show runs started elsewhere without a reload", () =>
  explained(page, "run-lists-live", async () => {
    const automation = await createAutomation(s, project, {
      name: "quick check",
      kind: "http",
      environment: envId,
      steps: [{ request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] }],
    });
    await page.goto(`${s.url}/#/p/${project}/runs`);
    await page.locator("table").first().waitFor();
    // Started by CI, through the API: the open page shows it on its own.
    const runId = await startRun(s, project, automation, { metadata: { commit: "abc123" } });
    await page.locator(`tr[data-run-id='${runId}']`).waitFor({ timeout: 20_000 });
    await waitForRun(s, project, runId);
    await page.locator(`tr[data-run-id='${runId}'] .badge-passed`).waitFor({ timeout: 20_000 });

    const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "nightly", automation_ids: [automation] }), 201);
    await page.goto(`${s.url}/#/p/${project}/groups/${group.id}`);
    await page.getByText("No group runs yet.").waitFor();
    const groupRun = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
    await page.locator(`a[href$='/group-runs/${groupRun.id}']`).first().waitFor({ timeout: 20_000 });
  }));

/** Words of the cells of `table` (its headers too) that are broken over two lines or more (a column too narrow for them). */
function brokenWords(table: Locator): Promise<string[]> {
  return table.evaluate((t) => {
    const broken: string[] = [];
    for (const cell of t.querySelectorAll("th, td")) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? "";
        for (const m of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(m[0]);
        }
      }
    }
    return broken;
  });
}

test("an automation's Recent runs are readable at 1280×800: no word is broken over lines", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const p = await context.newPage();
  watch(p);
  await explained(p, "automation-recent-runs", async () => {
    await signInAsOwner(p, s.url);
    const automation = await createAutomation(s, project, {
      name: "checks the product page of the shop",
      kind: "http",
      environment: envId,
      steps: [{ request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] }],
    });
    await waitForRun(s, project, await startRun(s, project, automation));
    await p.goto(`${s.url}/#/p/${project}/automations/${automation}`);
    const card = p.locator("section.card", { has: p.getByRole("heading", { name: "Recent runs" }) });
    await card.locator("tr[data-run-id] .badge-passed").waitFor({ timeout: 20_000 });
    // All its runs are of this automation: the table does not name it on every row.
    expect(await card.locator("th").allTextContents()).toEqual(["Status", "Started", "Duration"]);
    expect(await brokenWords(card.locator("table"))).toEqual([]);
    await shot(p, "automation-recent-runs");
  });
  await context.close();
});

test("in run lists, the space between a run's PASSED and FLAKY badges is not underlined with their link", () =>
  explained(page, "run-list-flaky-badges", async () => {
    const automation = await createAutomation(s, project, {
      name: "passes on its second try",
      kind: "http",
      environment: envId,
      retries: 1,
      steps: [{ request: { method: "GET", url: `/flaky?key=${crypto.randomUUID()}` }, expect: [{ status: 200 }] }],
    });
    const run = await waitForRun(s, project, await startRun(s, project, automation));
    expect(run.status).toBe("passed");
    /** Text a link underlines around the badges: any text not inside an inline block (a badge, or the badges together). */
    const underlined = (selector: string) =>
      page.evaluate((sel) => {
        const found: string[] = [];
        for (const link of document.querySelectorAll(sel)) {
          const walker = document.createTreeWalker(link, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            let inBlock = false;
            for (let el = node.parentElement; el && el !== link; el = el.parentElement) if (getComputedStyle(el).display !== "inline") inBlock = true;
            if (!inBlock && (node.textContent ?? "") !== "") found.push(JSON.stringify(node.textContent));
          }
        }
        return found;
      }, selector);
    for (const [where, title] of [
      [`/p/${project}/runs`, "Runs · Shop · svc"],
      ["/", "Dashboard · svc"],
    ]) {
      await page.goto(`${s.url}/#${where}`);
      // A hash change keeps the last page on screen until the new one renders: its badges would answer for this one.
      await page.waitForFunction((t) => document.title === t, title);
      const badges = page.locator(`a[href$='/runs/${run.id}']`, { has: page.locator(".badge-flaky") });
      await badges.first().waitFor({ timeout: 20_000 });
      expect(await badges.first().innerText()).toBe("PASSED FLAKY");
      expect(await underlined(`a[href$='/runs/${run.id}']:has(.badge-flaky)`)).toEqual([]);
    }
  }));

test("a hidden page stops following the runs list, and reloads it at once when shown again", async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const p = await context.newPage();
  watch(p);
  await explained(p, "run-list-hidden", async () => {
    await signInAsOwner(p, s.url);
    // The page's timers are the test's from here: no poll happens unless the test moves the clock.
    await p.clock.install();
    let asked = 0;
    p.on("request", (r) => {
      if (r.url().includes(`/projects/${project}/runs?`)) asked++;
    });
    await p.goto(`${s.url}/#/p/${project}/runs`);
    /** Moves the page's clock on in small steps until `done` holds (or a minute of page time has passed). */
    const advance = async (done: () => boolean) => {
      for (let i = 0; i < 600 && !done(); i++) await p.clock.runFor(100);
      return done();
    };
    expect(await advance(() => asked >= 1)).toBe(true);
    await p.getByLabel("Status").waitFor();
    // Shown, it asks again every few seconds.
    const first = asked;
    expect(await advance(() => asked > first)).toBe(true);
    const setHidden = (hidden: boolean) =>
      p.evaluate((h) => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => h });
        document.dispatchEvent(new Event("visibilitychange"));
      }, hidden);
    await setHidden(true);
    await p.clock.runFor(1_000);
    const hiddenAt = asked;
    // A minute of page time passes: not one request.
    await p.clock.runFor(60_000);
    expect(asked).toBe(hiddenAt);
    await setHidden(false);
    expect(await advance(() => asked > hiddenAt)).toBe(true);
  });
  await context.close();
});

test("run lists say how far a running run got, give a queued run no count, and count an error run's step as an error", () =>
  explained(page, "run-list-step-counts", async () => {
    const running = await createAutomation(s, project, {
      name: "five steps, stuck at the third",
      kind: "http",
      environment: envId,
      steps: [
        { name: "read the product", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "read it again", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "wait forever", request: { method: "GET", url: "/stuck", timeout_ms: 60_000 }, expect: [{ status: 200 }] },
        { name: "and again", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
        { name: "and once more", request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] },
      ],
    });
    const runningId = await startRun(s, project, running);
    for (let i = 0; ; i++) {
      const run = await json<{ summary: { steps: number } }>(await s.call("GET", `/projects/${project}/runs/${runningId}`));
      if (run.summary.steps === 2) break;
      if (i > 200) throw new Error("the first two steps were never recorded");
      await Bun.sleep(50);
    }
    // An environment only a runner labelled so may run: no such runner, its run stays queued.
    const nobody = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/environments`, {
        name: "nobody runs it",
        variables: { BASE_URL: `http://127.0.0.1:${target.port}` },
        runner_labels: ["no-such-runner"],
      }),
      201,
    );
    const queued = await createAutomation(s, project, {
      name: "never taken",
      kind: "http",
      environment: nobody.id,
      steps: [{ request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] }],
    });
    const queuedId = await startRun(s, project, queued);
    const gone = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const closed = `http://127.0.0.1:${gone.port}`;
    gone.stop(true);
    const erring = await createAutomation(s, project, {
      name: "calls a stopped service",
      kind: "http",
      environment: envId,
      steps: [{ request: { method: "GET", url: `${closed}/orders` }, expect: [{ status: 200 }] }],
    });
    const errorRun = await waitForRun(s, project, await startRun(s, project, erring));
    expect(errorRun.status).toBe("error");

    await page.goto(`${s.url}/#/p/${project}/runs`);
    const steps = (id: string) => page.locator(`tr[data-run-id='${id}'] [data-label="Steps"]`);
    await steps(errorRun.id).waitFor({ timeout: 10_000 });
    expect(await steps(runningId).innerText()).toBe("2 passed so far…");
    expect(await steps(queuedId).innerText()).toBe("not started");
    // As its page counts it: "0 passed · 0 failed · 1 error".
    expect(await steps(errorRun.id).innerText()).toBe("0/1 · 1 error");
    await shot(page, "run-list-step-counts");
    await s.call("POST", `/projects/${project}/runs/${runningId}/cancel`);
    await s.call("POST", `/projects/${project}/runs/${queuedId}/cancel`);
  }));

test("an assertion's result is said in words, and a JSON string that looks like a number is quoted beside the number expected", () =>
  explained(page, "run-page-assertion-words", async () => {
    const run = await waitForRun(
      s,
      project,
      await startRun(
        s,
        project,
        await createAutomation(s, project, {
          name: "order id is a number",
          kind: "http",
          environment: envId,
          steps: [
            {
              name: "read the order",
              request: { method: "GET", url: "/order" },
              expect: [{ status: 200 }, { json: "$.id", equals: 7 }, { json: "$.count", equals: 2 }],
            },
          ],
        }),
      ),
    );
    expect(run.status).toBe("failed");
    await page.goto(`${s.url}/#/p/${project}/runs/${run.id}`);
    const table = page.locator("li.step[data-step='0'] table");
    await table.waitFor();
    // A screen reader reads the cell's words, not a tick or a cross.
    const results = table.locator("td[data-label='Result']");
    expect(await results.count()).toBe(3);
    expect(await table.getByRole("cell", { name: "passed", exact: true }).count()).toBe(2);
    expect(await table.getByRole("cell", { name: "failed", exact: true }).count()).toBe(1);
    expect(await table.locator("td[data-label='Expected']").allInnerTexts()).toEqual(["status == 200", "$.id == 7", "$.count == 2"]);
    // The string "7" is not the number 7 the expectation asks for: it reads as a string, as the run's message says it.
    expect(await table.locator("td[data-label='Actual'] > code").allInnerTexts()).toEqual(["200", '"7"', "2"]);
  }));

test("a run's status is announced when it changes, and after Cancel run (from the keyboard) the focus is on that status", () =>
  explained(page, "run-page-cancel-focus", async () => {
    const automation = await createAutomation(s, project, {
      name: "stuck until cancelled",
      kind: "http",
      environment: envId,
      steps: [{ name: "wait forever", request: { method: "GET", url: "/stuck", timeout_ms: 60_000 }, expect: [{ status: 200 }] }],
    });
    const runId = await startRun(s, project, automation);
    await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
    const status = page.getByTestId("run-status");
    await status.getByText("running").waitFor({ timeout: 20_000 });
    expect(await status.getAttribute("aria-live")).toBe("polite");
    await page.getByRole("button", { name: "Cancel run" }).focus();
    await page.keyboard.press("Enter");
    await status.getByText("cancelled").waitFor({ timeout: 10_000 });
    await page.getByRole("button", { name: "Cancel run" }).waitFor({ state: "detached" });
    // The button pressed is gone: the focus is on what it changed, and Shift+Tab reaches Run again beside it.
    expect(await status.evaluate((el) => el === document.activeElement)).toBe(true);
  }));

test("a group run's page lists the runs that did not pass first, each part in the group's order, under a heading", () =>
  explained(page, "group-run-failures-first", async () => {
    const step = (url: string) => [{ name: "read", request: { method: "GET", url }, expect: [{ status: 200 }] }];
    const ids = [
      await createAutomation(s, project, { name: "first passes", kind: "http", environment: envId, steps: step("/product") }),
      await createAutomation(s, project, { name: "second fails", kind: "http", environment: envId, steps: step("/nothing-here") }),
      await createAutomation(s, project, { name: "third passes", kind: "http", environment: envId, steps: step("/product") }),
      await createAutomation(s, project, { name: "fourth fails", kind: "http", environment: envId, steps: step("/nothing-either") }),
    ];
    const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "mixed", automation_ids: ids }), 201);
    const groupRun = await json<{ id: string; runs: { id: string }[] }>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, {}), 202);
    for (const r of groupRun.runs) await waitForRun(s, project, r.id);
    await page.goto(`${s.url}/#/p/${project}/group-runs/${groupRun.id}`);
    await page.getByTestId("group-run-status").getByText("failed").waitFor({ timeout: 20_000 });
    const names = await page.locator("tr[data-run-id] td[data-label='Automation']").allInnerTexts();
    expect(names).toEqual(["second fails", "fourth fails", "first passes", "third passes"]);
    // A screen reader's list of headings leads to the table.
    expect(await page.getByRole("heading", { name: "Runs, those that did not pass first" }).count()).toBe(1);
  }));

test("paging the runs list from the keyboard keeps the focus on the list, to the last page and back", () =>
  explained(page, "runs-list-paging-focus", async () => {
    const paged = await projectWithEnv(s, "Paging", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const automation = await createAutomation(s, paged.project, {
      name: "one of many",
      kind: "http",
      environment: paged.envId,
      steps: [{ request: { method: "GET", url: "/product" }, expect: [{ status: 200 }] }],
    });
    // One more than a page of 50.
    const ids: string[] = [];
    for (let i = 0; i < 51; i++) ids.push(await startRun(s, paged.project, automation));
    for (const id of ids) await waitForRun(s, paged.project, id);
    await page.goto(`${s.url}/#/p/${paged.project}/runs`);
    await page.getByRole("button", { name: "Older runs" }).focus();
    await page.keyboard.press("Enter");
    const shown = (n: number) => page.waitForFunction((n) => document.querySelectorAll("tr[data-run-id]").length === n, n);
    await shown(1);
    // Older runs is gone on the last page: the focus is on the list it turned, not lost to the top of the page.
    const listed = page.getByRole("region", { name: "Runs listed" });
    expect(await listed.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.getByRole("button", { name: "First page" }).focus();
    await page.keyboard.press("Enter");
    await shown(50);
    expect(await listed.evaluate((el) => el === document.activeElement)).toBe(true);
  }));
