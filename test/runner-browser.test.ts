// Browser automations in real headless Chromium: every step kind and locator, failures with screenshots,
// artifacts served, secrets masked, and a clear error when no browser is installed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { projectWithEnv, runToEnd } from "./helpers/runs";

let s: TestServer;
let target: TargetApp;
let project: string;

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "browser runs", { BASE_URL: target.url, USER_EMAIL: "ada@example.test" }, { USER_PASSWORD: "s3cret-pass" }));
});
afterAll(async () => {
  await s.stop();
  await target.stop();
});

const browser = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `b-${crypto.randomUUID().slice(0, 8)}`,
  kind: "browser",
  environment: "test",
  steps,
  ...extra,
});

const PNG = [0x89, 0x50, 0x4e, 0x47];

describe("browser steps", () => {
  test("the canonical sign-in automation passes, with a screenshot served as an artifact and the secret masked", async () => {
    const run = await runToEnd(
      s,
      project,
      browser([
        { goto: "/login" },
        { fill: { locator: "label=Email", value: "{{USER_EMAIL}}" } },
        { fill: { locator: "label=Password", value: "{{USER_PASSWORD}}" } },
        { click: 'role=button[name="Sign in"]' },
        { expect: { text: "Welcome" } },
        { expect: { url: "/dashboard" } },
        { screenshot: "after-sign-in" },
      ]),
      {},
    );
    expect(run.steps.filter((x) => x.status !== "passed")).toEqual([]);
    expect(run.status).toBe("passed");
    expect(run.artifacts).toEqual(["07-after-sign-in.png"]);
    const res = await s.call("GET", `/projects/${project}/runs/${run.id}/artifacts/07-after-sign-in.png`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect([...new Uint8Array(await res.arrayBuffer()).slice(0, 4)]).toEqual(PNG);
    expect(JSON.stringify(run)).not.toContain("s3cret-pass");
    // Another workspace sees neither the run nor its artifact.
    const other = await s.userWithKey("eve@other.test", "other");
    expect((await s.call("GET", `/projects/${project}/runs/${run.id}/artifacts/07-after-sign-in.png`, undefined, other.key)).status).toBe(404);
  }, 60_000);

  test("every other step kind and locator passes on the list page and the form", async () => {
    const run = await runToEnd(
      s,
      project,
      browser([
        { goto: "{{BASE_URL}}/login" },
        { expect: { title: "Sign in" } },
        { check: "#remember" },
        { uncheck: "css=#remember" },
        { check: "label=Remember me" },
        { select: { locator: "label=Team", value: "dev" } },
        { fill: { locator: "#email", value: "x@y.z" } },
        { press: { locator: "#email", key: "End" } },
        { expect: { hidden: "#hint", count: { locator: "css=option", equals: 2 } } },
        { goto: "/items-page" },
        { expect: { visible: "testid=filter", count: { locator: "testid=item", equals: 3 } } },
        { fill: { locator: "testid=filter", value: "bre" } },
        { expect: { count: { locator: "css=li:visible", equals: 1 } } },
        { click: "text=Load more" },
        { wait_for: { text: "Loaded later" } },
        { wait_for: { locator: "#later", state: "visible" } },
        { hover: "text=hover me" },
        { expect: { visible: "#tip" } },
        { press: "Tab" },
        { click: 'role=link[name="hover me"]' },
        { wait_for: { url: "/items-page" } },
        { expect: { url: { matches: "^http:\\/\\/127\\.0\\.0\\.1:\\d+\\/items-page$" } } },
        { name: "an http check inside a browser automation", request: { url: "/items/1" }, expect: [{ status: 200 }] },
      ]),
    );
    expect(run.steps.filter((x) => x.status !== "passed").map((x) => `${x.name}: ${x.message}`)).toEqual([]);
    expect(run.status).toBe("passed");
  }, 60_000);

  test("a failing expectation says expected and actual, skips the rest and stores a failure screenshot", async () => {
    const run = await runToEnd(
      s,
      project,
      browser([
        { goto: "/login" },
        { fill: { locator: "label=Email", value: "{{USER_EMAIL}}" } },
        { fill: { locator: "label=Password", value: "wrong" } },
        { click: 'role=button[name="Sign in"]' },
        { expect: { text: "Welcome" }, timeout_ms: 500 },
        { screenshot: "never" },
      ]),
    );
    expect(run.status).toBe("failed");
    expect(run.steps.map((x) => x.status)).toEqual(["passed", "passed", "passed", "passed", "failed", "skipped"]);
    expect(run.steps[4]?.message).toContain('text: expected "Welcome" to be visible, it was not');
    expect(run.steps[4]?.artifacts).toEqual(["05-failure.png"]);
    expect(run.artifacts).toEqual(["05-failure.png"]);
    const res = await s.call("GET", `/projects/${project}/runs/${run.id}/artifacts/05-failure.png`);
    expect(res.status).toBe(200);
    expect([...new Uint8Array(await res.arrayBuffer()).slice(0, 4)]).toEqual(PNG);
  }, 60_000);

  test("url, title, count and locator failures each name what was expected and what was found", async () => {
    const cases: [unknown, string][] = [
      [{ expect: { url: "/dashboard" }, timeout_ms: 300 }, "url: expected /dashboard, got http://"],
      [{ expect: { title: "Home" }, timeout_ms: 300 }, 'title: expected "Home", got "Sign in"'],
      [{ expect: { count: { locator: "css=input", equals: 9 } }, timeout_ms: 300 }, "count of css=input: expected 9, got 3"],
      [{ click: "testid=nothing", timeout_ms: 300 }, 'click test id "nothing": no element matches testid=nothing (waited 300 ms)'],
      [{ expect: { visible: "#hint" }, timeout_ms: 300 }, "visible: expected #hint to be visible"],
    ];
    for (const [step, message] of cases) {
      const run = await runToEnd(s, project, browser([{ goto: "/login" }, step]));
      expect(run.status).toBe("failed");
      expect(run.steps[1]?.message ?? "").toContain(message);
    }
  }, 60_000);

  test('a role name matches a substring, ignoring case, unless flagged exact: role=heading[name="Sign"s] is not "Sign in"', async () => {
    const loose = await runToEnd(s, project, browser([{ goto: "/login" }, { expect: { visible: 'role=heading[name="sign"]' } }]));
    expect(loose.status).toBe("passed");
    const exact = await runToEnd(s, project, browser([{ goto: "/login" }, { expect: { visible: 'role=heading[name="Sign in"s]' } }]));
    expect(exact.status).toBe("passed");
    const partial = await runToEnd(s, project, browser([{ goto: "/login" }, { expect: { visible: 'role=heading[name="Sign"s]' }, timeout_ms: 300 }]));
    expect(partial.status).toBe("failed");
  }, 60_000);

  test("each action, wait and expectation that cannot happen fails with one clear line and a failure screenshot", async () => {
    // [step after goto /login, exact message]; a few hundred ms per step keep the whole table quick.
    const cases: [Record<string, unknown>, string][] = [
      [{ fill: { locator: "#nickname", value: "ada" } }, "fill #nickname: no element matches #nickname (waited 300 ms)"],
      [{ fill: { locator: "#hint", value: "ada" } }, "fill #hint: #hint matched 1 element, but the first was not ready within 300 ms (it is not visible)"],
      [{ select: { locator: "label=Team", value: "ops" } }, 'select in "Team": expected an option "ops", got options "qa" (QA), "dev" (Dev)'],
      [
        { select: { locator: "label=Team", value: ["dev", "ops", "sales"] } },
        'select in "Team": expected options "ops", "sales", got options "qa" (QA), "dev" (Dev)',
      ],
      [{ select: { locator: "#country", value: "fr" } }, "select in #country: no element matches #country (waited 300 ms)"],
      [{ check: "label=Subscribe" }, 'check "Subscribe": no element matches label=Subscribe (waited 300 ms)'],
      [{ uncheck: "#newsletter" }, "uncheck #newsletter: no element matches #newsletter (waited 300 ms)"],
      [{ hover: "text=Help menu" }, 'hover text "Help menu": no element matches text=Help menu (waited 300 ms)'],
      [{ press: { locator: "#search", key: "Enter" } }, "press Enter in #search: no element matches #search (waited 300 ms)"],
      [{ wait_for: { locator: "#done" } }, "wait for #done: expected it to be visible within 300 ms, got no matching element"],
      [
        { wait_for: { locator: "#hint", state: "visible" } },
        "wait for #hint: expected it to be visible within 300 ms, got 1 matching element, the first not visible",
      ],
      [{ wait_for: { text: "Saved" } }, 'wait for text "Saved": expected it to be visible within 300 ms, got no matching element (page {target}/login)'],
      [{ wait_for: { url: "/dashboard" } }, "url: expected /dashboard within 300 ms, got {target}/login"],
      [{ expect: { hidden: "#email" } }, "hidden: expected #email to be hidden, it is still visible"],
    ];
    const runs = await Promise.all(
      cases.map(([step]) => runToEnd(s, project, browser([{ goto: "/login" }, { ...step, timeout_ms: 300 }, { screenshot: "never" }]))),
    );
    // Compared as one list, so a mismatch shows every case at once.
    expect(
      runs.map((run) => ({
        status: run.status,
        steps: run.steps.map((x) => x.status),
        message: run.steps[1]?.message,
        artifacts: [run.steps[1]?.artifacts, run.artifacts],
      })),
    ).toEqual(
      cases.map(([, message]) => ({
        status: "failed",
        steps: ["passed", "failed", "skipped"],
        message: message.replaceAll("{target}", target.url),
        artifacts: [["02-failure.png"], ["02-failure.png"]],
      })),
    );
    for (const run of runs) {
      const shot = await s.call("GET", `/projects/${project}/runs/${run.id}/artifacts/02-failure.png`);
      expect(shot.status).toBe(200);
      expect(shot.headers.get("content-type")).toBe("image/png");
      expect([...new Uint8Array(await shot.arrayBuffer()).slice(0, 4)]).toEqual(PNG);
    }
  }, 120_000);

  test("an unreachable page is an error that says what to check", async () => {
    const dead = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${dead.port}/`;
    await dead.stop(true);
    const run = await runToEnd(s, project, browser([{ goto: url }]));
    expect(run.status).toBe("error");
    expect(run.error).toContain("could not reach the page");
  }, 60_000);
});

test("without a browser, a browser run ends error and says how to install one", async () => {
  const noBrowser = await startTestServer({ rate_limit: { enabled: false }, runner: { browser_path: "/nonexistent/chromium" } });
  try {
    const { project: p } = await projectWithEnv(noBrowser, "no browser", { BASE_URL: target.url });
    const run = await runToEnd(noBrowser, p, browser([{ goto: "/login" }]));
    expect(run.status).toBe("error");
    expect(run.error).toContain("runner.browser_path is /nonexistent/chromium, which is not an executable file");
    expect(run.error).toContain("apt-get install chromium-headless-shell, or chromium");
    // /readyz names the problem as well, and the server stays ready: only browser runs need a browser.
    const ready = await fetch(`${noBrowser.url}/readyz`);
    expect(ready.status).toBe(200);
    const workers = ((await ready.json()) as { checks: { workers: Record<string, unknown> } }).checks.workers;
    expect(workers.ok).toBe(true);
    expect(workers.browser).toBeNull();
    expect(workers.browser_problem).toContain("runner.browser_path is /nonexistent/chromium, which is not an executable file");
  } finally {
    await noBrowser.stop();
  }
}, 60_000);
