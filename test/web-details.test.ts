// Parts of the web application no other browser test reaches, in headless Chromium against a real server with
// the real run and generation engines: a failing http step's expected-vs-actual table and request/response
// excerpt, a generation's progress while it runs and the drafts it made, a feature page that asks for no generation
// (and logs no 404) before there is one, deleting an automation, the automation list's feature, group and kind
// filters, the keys panel's expiry and last-used times (also at 390 px), "Run again", and activating and running all
// of a feature's drafts at once.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { explained, launchBrowser, shot, signInAsOwner, watch } from "./helpers/browser";
import { createAutomation, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil } from "./helpers/wait";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let browser: Browser;
let page: Page;

// A small web site for the crawl generator whose linked pages answer only once the test opens the gate, so the
// generation is caught in the middle.
let openGate: () => void = () => {};
const gate = new Promise<void>((resolve) => {
  openGate = resolve;
});
let site: ReturnType<typeof Bun.serve>;
const html = (title: string, body: string) => new Response(`<!doctype html><title>${title}</title>${body}`, { headers: { "content-type": "text/html" } });
const SUBPAGES = ["/phones", "/tablets", "/watches"];

async function api<T>(method: string, path: string, body?: unknown, status = 200): Promise<T> {
  const res = await s.call(method, path, body);
  const text = await res.text();
  if (res.status !== status) throw new Error(`${method} ${path}: expected HTTP ${status}, got ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** Dates as the browser shows them (this context: en-US, UTC), spaces normalised (ICU puts U+202F before "PM"). */
const spaces = (t: string) => t.replace(/\s+/g, " ").trim();
function shown(iso: string | number): string {
  const d = new Date(iso);
  return spaces(
    `${d.toLocaleDateString("en-US", { timeZone: "UTC", year: "numeric", month: "short", day: "numeric" })} ${d.toLocaleTimeString("en-US", { timeZone: "UTC", hour: "2-digit", minute: "2-digit" })}`,
  );
}

beforeAll(async () => {
  target = startTargetApp();
  site = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 60,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/") return html("Gadget shop", `<h1>Gadgets</h1><nav>${SUBPAGES.map((p) => `<a href="${p}">${p.slice(1)}</a>`).join(" ")}</nav>`);
      if (SUBPAGES.includes(path)) {
        await gate;
        return html(`All ${path.slice(1)}`, `<h1>${path.slice(1)}</h1><a href="/">home</a>`);
      }
      return new Response("no such page", { status: 404 });
    },
  });
  s = await startTestServer();
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1, locale: "en-US", timezoneId: "UTC" });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
  watch(page);
  await signInAsOwner(page, s.url);
});
afterAll(async () => {
  openGate();
  await browser?.close();
  await s?.stop();
  await target?.stop();
  site?.stop(true);
});

test("a failing http step shows expected and actual per assertion, and its request and response excerpt", () =>
  explained(page, "a-failing-http-step-shows-expected-and-a", async () => {
    const { project, envId } = await projectWithEnv(s, "Store", { BASE_URL: target.url });
    const automation = await createAutomation(s, project, {
      name: "items are counted",
      kind: "http",
      environment: envId,
      steps: [
        {
          name: "list items",
          request: { method: "GET", url: "/items", headers: { accept: "application/json" } },
          expect: [
            { status: 201 },
            { json: "$.total", equals: 4 },
            { json: "$.items[0]", equals: { id: 1, name: "pear" } },
            { header: "x-total", equals: "3" },
          ],
        },
      ],
    });
    const runId = await startRun(s, project, automation);
    expect((await waitForRun(s, project, runId)).status).toBe("failed");

    await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
    await page.getByTestId("run-status").getByText("failed").waitFor();
    const step = page.locator("li.step[data-step='0']");
    expect(await step.getAttribute("class")).toContain("step-failed");
    expect(await step.locator(".step-message").innerText()).toContain("status: expected 201, got 200");
    const table = step.locator("table");
    expect(await table.isVisible()).toBe(true);
    expect(await table.locator("thead th").allTextContents()).toEqual(["Result", "Expected", "Actual"]);
    const rows = await table.locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        failed: tr.classList.contains("row-failed"),
        cells: [...tr.querySelectorAll("td")].map((td) => (td as HTMLElement).innerText.trim()),
      })),
    );
    // The Expected cell says subject, operator and value; a failed equality of two documents adds a line diff.
    expect(rows.map((r) => ({ ...r, cells: r.cells.map((c) => c.split("\n")[0]) }))).toEqual([
      { failed: true, cells: ["✗", "status == 201", "200"] },
      { failed: true, cells: ["✗", "$.total == 4", "3"] },
      { failed: true, cells: ["✗", '$.items[0] == {"id":1,"name":"pear"}', '{"id":1,"name":"apple","price":3,"tags":["fruit","red"]}'] },
      { failed: false, cells: ["✓", 'header x-total == "3"', "3"] },
    ]);

    // The excerpt is folded away until asked for.
    const details = step.locator("details");
    const excerpts = details.locator("pre.excerpt");
    // (and only made once opened, so a long run's page stays quick).
    expect(await excerpts.count()).toBe(0);
    await details.getByText("Request and response").click();
    await excerpts.nth(1).waitFor({ state: "visible" });
    expect(await excerpts.count()).toBe(2);
    const request = (await excerpts.nth(0).innerText()).split("\n");
    expect(request[0]).toBe(`GET ${target.url}/items`);
    expect(request).toContain("accept: application/json");
    const response = await excerpts.nth(1).innerText();
    expect(response.split("\n")[0]).toBe("200");
    expect(response).toContain("x-total: 3");
    // The body comes before the headers.
    expect(response.indexOf('"items"')).toBeLessThan(response.indexOf("x-total: 3"));
    // A JSON body is shown indented for reading.
    expect(response).toContain('{\n  "items": [\n    {\n      "id": 1,\n      "name": "apple",');
    await shot(page, "run-failed-assertions");
    await page.setViewportSize({ width: 390, height: 844 });
    const box = await table.locator("tbody tr").first().boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(page, "run-failed-assertions");
    await page.setViewportSize({ width: 1280, height: 900 });
  }));

test("a generation started from the feature page shows its progress live, then its drafts", () =>
  explained(page, "a-generation-started-from-the-feature-pa", async () => {
    const home = `http://127.0.0.1:${site.port}/`;
    const feature = await api<{ id: string }>("POST", "/projects/store/features", { name: "Catalogue pages", target: { kind: "web", url: home } }, 201);
    await page.goto(`${s.url}/#/p/store/features/${feature.id}`);
    await page.getByLabel("Strategy").selectOption("crawl");
    await page.getByRole("button", { name: "Generate automations" }).click();

    // The home page is read, its three links are waiting at the gate: 1 of 4 pages done.
    const panel = page.getByTestId("generation");
    const bar = panel.getByRole("progressbar");
    await panel.locator("[role=progressbar][aria-valuenow='1'][aria-valuemax='4']").waitFor();
    expect(await bar.innerText()).toBe("crawl 1/4");
    await panel.getByText("running").waitFor();
    expect(await page.getByRole("button", { name: "Generate automations" }).isDisabled()).toBe(true);
    expect(await page.getByRole("button", { name: "Cancel", exact: true }).isVisible()).toBe(true);
    await shot(page, "feature-generating");

    openGate();
    await panel.getByText("succeeded").waitFor({ timeout: 30_000 });
    await bar.waitFor({ state: "detached" });
    expect(await page.getByRole("button", { name: "Generate automations" }).isDisabled()).toBe(false);
    const generation = await api<{ status: string; automation_ids: string[] }>("GET", `/projects/store/features/${feature.id}/generation`);
    expect(generation.status).toBe("succeeded");
    const made = await Promise.all(generation.automation_ids.map((id) => api<{ name: string; status: string }>("GET", `/projects/store/automations/${id}`)));
    expect(made.length).toBeGreaterThanOrEqual(4);
    expect(made.map((a) => a.status)).toEqual(made.map(() => "draft"));
    expect(made.map((a) => a.name)).toContain('Page / loads with its title "Gadget shop"');
    for (const path of SUBPAGES) expect(made.map((a) => a.name)).toContain(`Page ${path} loads with its title "All ${path.slice(1)}"`);

    const drafts = page.locator("ul.links li");
    await drafts.nth(made.length - 1).waitFor();
    const listed = await drafts.allInnerTexts();
    expect(listed.length).toBe(made.length);
    for (const a of made) {
      const item = listed.find((t) => t.startsWith(a.name)) ?? `(no list item for ${a.name})`;
      expect(item).toContain("from the latest generation");
      expect(item.toLowerCase()).toContain("draft");
    }
    await shot(page, "feature-generated");
  }));

test("a feature page without generations asks for none and logs no error; one that failed making nothing, or made drafts, is shown", () =>
  explained(page, "feature-page-without-generations", async () => {
    const { project } = await projectWithEnv(s, "Quiet feature", { BASE_URL: target.url });
    const home = `http://127.0.0.1:${site.port}/`;
    const feature = await api<{ id: string }>(
      "POST",
      `/projects/${project}/features`,
      { name: "Home page", acceptance_criteria: `Scenario: the home page\n  Given I open "${home}"\n  Then I should see "Gadgets"` },
      201,
    );
    const asked: string[] = [];
    const problems: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (r.url().endsWith("/generation") || r.url().includes("/generation?")) asked.push(r.url());
    };
    const onConsole = (m: { type(): string; text(): string }) => {
      if (m.type() === "error") problems.push(m.text());
    };
    page.on("request", onRequest);
    page.on("console", onConsole);
    try {
      await page.goto(`${s.url}/#/p/${project}/features/${feature.id}`);
      // The feature's automations are listed (none) once the panel has loaded what it loads.
      await page.getByText("None yet.").waitFor();
      await page.evaluate(() => fetch("/api/v1/web/session").then((r) => r.text()));
      expect(asked).toEqual([]);
      expect(problems).toEqual([]);

      // Started here, the generation is followed to its end; on the next visit its drafts say there is one to show.
      await page.getByLabel("Strategy").selectOption("gherkin");
      await page.getByRole("button", { name: "Generate automations" }).click();
      await page.getByTestId("generation").getByText("succeeded").waitFor({ timeout: 30_000 });
      await page.goto(`${s.url}/#/p/${project}/features`);
      await page.goto(`${s.url}/#/p/${project}/features/${feature.id}`);
      await page.getByTestId("generation").getByText("succeeded").waitFor();
      expect(problems).toEqual([]);

      // A generation that made nothing (it failed: this server has no model) is read from the feature record.
      const other = await api<{ id: string }>("POST", `/projects/${project}/features`, { name: "Nothing made" }, 201);
      await api("POST", `/projects/${project}/features/${other.id}/generation`, { strategy: "llm" }, 202);
      const failed = await api<{ status: string; error: string }>("GET", `/projects/${project}/features/${other.id}/generation?wait=10`, undefined, 200);
      expect(failed.status).toBe("failed");
      expect((await api<{ latest_generation: unknown }>("GET", `/projects/${project}/features/${other.id}`, undefined, 200)).latest_generation).toEqual({
        id: expect.stringMatching(/^gen_/),
        status: "failed",
      });
      await page.goto(`${s.url}/#/p/${project}/features/${other.id}`);
      await page.getByTestId("generation").getByText("failed").waitFor();
      await page.getByText(failed.error).waitFor();
    } finally {
      page.off("request", onRequest);
      page.off("console", onConsole);
    }
  }));

test("an automation is deleted from its page after confirming, and the API then answers 404", () =>
  explained(page, "an-automation-is-deleted-from-its-page-a", async () => {
    const doomed = await createAutomation(s, "store", { name: "to be deleted", kind: "http", steps: [{ request: { method: "GET", url: "/health" } }] });
    await page.goto(`${s.url}/#/p/store/automations/${doomed}`);
    const del = page.getByRole("button", { name: "Delete", exact: true });
    await del.click();
    const confirm = page.getByRole("group", { name: "Delete this automation?" });
    await confirm.waitFor();
    await confirm.getByRole("button", { name: "Cancel" }).click();
    await confirm.waitFor({ state: "detached" });
    expect((await s.call("GET", `/projects/store/automations/${doomed}`)).status).toBe(200);

    await del.click();
    await confirm.getByRole("button", { name: "Yes, delete" }).click();
    await page.waitForURL(/#\/p\/store\/automations$/);
    await page.locator("tr[data-automation='items are counted']").waitFor();
    expect(await page.locator("tr[data-automation='to be deleted']").count()).toBe(0);
    const gone = await s.call("GET", `/projects/store/automations/${doomed}`);
    expect(gone.status).toBe(404);
    expect((await gone.json()).error).toBe("not_found");
  }));

test("the automation list's feature, group and kind filters each narrow the list", () =>
  explained(page, "the-automation-list-s-feature-group-and-", async () => {
    await api("POST", "/projects", { name: "Filters" }, 201);
    const checkout = await api<{ id: string }>("POST", "/projects/filters/features", { name: "Checkout" }, 201);
    await api("POST", "/projects/filters/features", { name: "Search" }, 201);
    const httpStep = [{ request: { method: "GET", url: "/health" } }];
    const browserStep = [{ goto: "/" }];
    const alpha = await createAutomation(s, "filters", { name: "alpha http", kind: "http", steps: httpStep, feature: checkout.id });
    await createAutomation(s, "filters", { name: "beta browser", kind: "browser", steps: browserStep, feature: checkout.id });
    const gamma = await createAutomation(s, "filters", { name: "gamma http", kind: "http", steps: httpStep });
    await createAutomation(s, "filters", { name: "delta browser", kind: "browser", steps: browserStep });
    await api("POST", "/projects/filters/groups", { name: "nightly", automation_ids: [alpha, gamma] }, 201);
    await api("POST", "/projects/filters/groups", { name: "empty group" }, 201);

    // Waits for the list to show exactly these rows (every step below changes what is shown, so an earlier list
    // cannot pass for the expected one), then asserts it for a readable failure.
    const rowsShow = async (expected: string[]) => {
      const want = [...expected].sort();
      await page
        .waitForFunction(
          (w) =>
            JSON.stringify([...document.querySelectorAll("tr[data-automation]")].map((r) => r.getAttribute("data-automation") ?? "").sort()) ===
            JSON.stringify(w),
          want,
        )
        .catch(() => {});
      expect((await page.locator("tr[data-automation]").evaluateAll((rs) => rs.map((r) => r.getAttribute("data-automation") ?? ""))).sort()).toEqual(want);
    };
    // An empty result: the "none" message appears only once a list has loaded (rows are also absent while loading).
    const noneShown = async () => {
      await page.getByText("No automations match.").waitFor();
      expect(await page.locator("tr[data-automation]").count()).toBe(0);
    };
    const all = ["alpha http", "beta browser", "gamma http", "delta browser"];
    await page.goto(`${s.url}/#/p/filters/automations`);
    await rowsShow(all);
    const feature = page.getByLabel(/^Feature/);
    const group = page.getByLabel(/^Group/);
    const kind = page.getByLabel(/^Kind/);
    await feature.locator("option", { hasText: "Checkout" }).waitFor({ state: "attached" });
    await group.locator("option", { hasText: "nightly" }).waitFor({ state: "attached" });

    // Each of feature and group: one that matches some, one that matches none, then "any" shows all again.
    const narrowing = [
      [feature, "Checkout", ["alpha http", "beta browser"], "Search"],
      [group, "nightly", ["alpha http", "gamma http"], "empty group"],
    ] as const;
    for (const [filter, some, shownBySome, none] of narrowing) {
      await filter.selectOption({ label: some });
      await rowsShow([...shownBySome]);
      await filter.selectOption({ label: none });
      await noneShown();
      await filter.selectOption({ label: "any" });
      await rowsShow(all);
    }

    await kind.selectOption("http");
    await rowsShow(["alpha http", "gamma http"]);
    await kind.selectOption("browser");
    await rowsShow(["beta browser", "delta browser"]);

    // Filters combine.
    await feature.selectOption({ label: "Checkout" });
    await rowsShow(["beta browser"]);
    await group.selectOption({ label: "nightly" });
    await noneShown();
    await kind.selectOption("http");
    await rowsShow(["alpha http"]);
    await shot(page, "automations-filtered");
  }));

test("the keys panel shows a key's expiry and, once the key is used, when it was last used; at 390 px too", () =>
  explained(page, "the-keys-panel-shows-a-key-s-expiry-and-", async () => {
    await page.goto(`${s.url}/#/settings/keys`);
    await page.getByLabel("Key name").fill("ci with expiry");
    await page.getByLabel("Expires (optional)").fill("2031-05-17");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").locator("code").innerText()).trim();
    const row = page.locator("tr", { hasText: "ci with expiry" });
    await row.waitFor();
    const cell = async (label: string) => spaces(await row.locator(`td[data-label='${label}']`).innerText());
    expect(await cell("Expires")).toBe("May 17, 2031 11:59 PM");
    expect(await cell("Last used")).toBe("never");
    expect(await cell("State")).toBe("ACTIVE");
    const listed = await api<{ data: { name: string; expires_at: string | null; last_used_at: string | null }[] }>("GET", "/keys");
    expect(listed.data.find((k) => k.name === "ci with expiry")).toMatchObject({ expires_at: "2031-05-17T23:59:59.000Z", last_used_at: null });

    const before = Date.now();
    expect((await s.call("GET", "/me", undefined, key)).status).toBe(200);
    const after = Date.now();
    await page.reload();
    await row.waitFor();
    const lastUsed = await cell("Last used");
    expect([shown(before), shown(after)]).toContain(lastUsed);
    const used = (await api<{ data: { name: string; last_used_at: string | null }[] }>("GET", "/keys")).data.find((k) => k.name === "ci with expiry");
    const at = Date.parse(used?.last_used_at ?? "");
    expect(at >= before - 1 && at <= after + 1).toBe(true);
    expect(lastUsed).toBe(shown(at));

    // At 390 px the row is a card: every value and the Revoke button are on screen, and Revoke works.
    await page.setViewportSize({ width: 390, height: 844 });
    const revoke = row.getByRole("button", { name: "Revoke" });
    await revoke.scrollIntoViewIfNeeded();
    const box = await revoke.boundingBox();
    expect(box).not.toBeNull();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    for (const label of ["Name", "Key", "Created", "Last used", "Expires", "State"]) {
      const b = await row.locator(`td[data-label='${label}']`).boundingBox();
      expect({ label, inside: !!b && b.x >= 0 && b.x + b.width <= 390 }).toEqual({ label, inside: true });
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
    await shot(page, "keys-expiry-last-used");
    await revoke.click();
    const yes = row.getByRole("button", { name: "Yes, revoke" });
    const yesBox = await yes.boundingBox();
    expect(yesBox && yesBox.x >= 0 && yesBox.x + yesBox.width <= 390).toBe(true);
    await yes.click();
    await row.getByText("revoked").waitFor();
    expect((await s.call("GET", "/me", undefined, key)).status).toBe(401);
    await page.setViewportSize({ width: 1280, height: 900 });
  }));

test("a finished run and a finished group run can be run again from their pages, in the same environment", () =>
  explained(page, "a-finished-run-and-a-finished-group-run-", async () => {
    const { project, envId } = await projectWithEnv(s, "Again", { BASE_URL: target.url });
    const automation = await createAutomation(s, project, {
      name: "items answer",
      kind: "http",
      environment: envId,
      steps: [{ request: { url: "/items" }, expect: [{ status: 200 }] }],
    });
    const first = await startRun(s, project, automation);
    expect((await waitForRun(s, project, first)).status).toBe("passed");

    await page.goto(`${s.url}/#/p/${project}/runs/${first}`);
    await page.getByTestId("run-status").getByText("passed").waitFor();
    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((u) => /#\/p\/[^/]+\/runs\/run_/.test(u.hash) && !u.hash.endsWith(first));
    const second = page.url().split("/runs/")[1] ?? "";
    const again = await waitForRun(s, project, second);
    expect(again).toMatchObject({ automation_id: automation, environment_id: envId, trigger: "web", status: "passed" });
    await page.getByTestId("run-status").getByText("passed").waitFor();

    const group = await api<{ id: string }>("POST", `/projects/${project}/groups`, { name: "again", automation_ids: [automation] }, 201);
    const groupRun = await api<{ id: string }>("POST", `/projects/${project}/groups/${group.id}/run`, { environment: envId }, 202);
    await page.goto(`${s.url}/#/p/${project}/group-runs/${groupRun.id}`);
    await page.getByTestId("group-run-status").getByText("passed").waitFor();
    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((u) => u.hash.includes("/group-runs/grn_") && !u.hash.endsWith(groupRun.id));
    const nextId = page.url().split("/group-runs/")[1] ?? "";
    await page.getByTestId("group-run-status").getByText("passed").waitFor();
    const next = await api<{ group_id: string; trigger: string; runs: { environment_id: string }[] }>("GET", `/projects/${project}/group-runs/${nextId}`);
    expect(next).toMatchObject({ group_id: group.id, trigger: "web" });
    expect(next.runs.map((r) => r.environment_id)).toEqual([envId]);
  }));

test("a feature's drafts are activated all at once and run all at once from the feature page", () =>
  explained(page, "feature-drafts-activate-and-run-all", async () => {
    const { project, envId } = await projectWithEnv(s, "Bulk", { BASE_URL: target.url });
    const feature = await api<{ id: string }>("POST", `/projects/${project}/features`, { name: "Items" }, 201);
    const ids = await Promise.all(
      ["items answer", "item 1 answers"].map((name, i) =>
        createAutomation(s, project, {
          name,
          kind: "http",
          status: "draft",
          feature: feature.id,
          environment: envId,
          steps: [{ request: { url: i === 0 ? "/items" : "/items/1" }, expect: [{ status: 200 }] }],
        }),
      ),
    );
    const disabled = await createAutomation(s, project, {
      name: "retired check",
      kind: "http",
      status: "disabled",
      feature: feature.id,
      environment: envId,
      steps: [{ request: { url: "/items" } }],
    });

    await page.goto(`${s.url}/#/p/${project}/features/${feature.id}`);
    await page.getByRole("button", { name: "Activate 2 drafts" }).waitFor();
    await shot(page, "feature-drafts");
    await page.getByRole("button", { name: "Activate 2 drafts" }).click();
    await page.getByRole("button", { name: /^Activate/ }).waitFor({ state: "detached" });
    for (const id of ids) expect((await api<{ status: string }>("GET", `/projects/${project}/automations/${id}`)).status).toBe("active");
    expect((await api<{ status: string }>("GET", `/projects/${project}/automations/${disabled}`)).status).toBe("disabled");

    await page.getByRole("button", { name: "Run all 2" }).click();
    // It opens the group run it started, as Run group does, and follows it there to its end.
    await page.waitForURL((u) => u.hash.startsWith(`#/p/${project}/group-runs/`));
    const groupRunId = page.url().split("/group-runs/")[1] ?? "";
    const runs = await api<{ data: { id: string; automation_id: string; trigger: string; group_run_id: string | null }[] }>("GET", `/projects/${project}/runs`);
    expect(runs.data.map((r) => r.automation_id).sort()).toEqual([...ids].sort());
    expect(runs.data.map((r) => r.trigger)).toEqual(["web", "web"]);
    expect(runs.data.map((r) => r.group_run_id)).toEqual([groupRunId, groupRunId]);
    for (const r of runs.data) expect((await waitForRun(s, project, r.id)).status).toBe("passed");
    await page.getByTestId("group-run-status").getByText("passed").waitFor({ timeout: 20_000 });
    expect(await page.locator("tr[data-run-id]").count()).toBe(2);
  }));

test("the run and group-run pages follow a running run by long-polls: the server holds their reads, and they show the end", () =>
  explained(page, "the-run-and-group-run-pages-follow-a-run", async () => {
    const key = crypto.randomUUID();
    const { project, envId } = await projectWithEnv(s, "Live", { BASE_URL: target.url });
    const automation = await createAutomation(s, project, {
      name: "held until released",
      kind: "http",
      environment: envId,
      steps: [{ request: { url: `/hold/${key}?ms=0`, timeout_ms: 60_000 }, expect: [{ status: 200 }] }],
    });
    const group = await api<{ id: string }>("POST", `/projects/${project}/groups`, { name: "live", automation_ids: [automation] }, 201);
    const groupRun = await api<{ id: string; runs: { id: string }[] }>("POST", `/projects/${project}/groups/${group.id}/run`, {}, 202);
    const runId = groupRun.runs[0]?.id ?? "";
    try {
      expect(await waitUntil(() => target.held(key).length === 1, 20_000)).toBe(true);
      await page.goto(`${s.url}/#/p/${project}/runs/${runId}`);
      await page.getByTestId("run-status").getByText("running").waitFor();
      expect(await waitUntil(() => s.server.core.waits.size === 1, 20_000)).toBe(true);
      await page.goto(`${s.url}/#/p/${project}/group-runs/${groupRun.id}`);
      await page.getByTestId("group-run-status").getByText("running").waitFor();
      // The run page's read is let go when its wait ends; the group run page's read is the one held now.
      expect(await waitUntil(() => s.server.core.waits.size >= 1, 20_000)).toBe(true);
      target.release(key);
      await page.getByTestId("group-run-status").getByText("passed").waitFor();
    } finally {
      target.release(key);
    }
  }));
