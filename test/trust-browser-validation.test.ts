// An invalid locator or regular expression in a browser step is refused when saved (400 naming the step and
// field), not found at run time; one made with {{…}} is checked after interpolation and errors the step.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { json, projectWithEnv, runToEnd } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let project: string;
let target: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  target = Bun.serve({
    port: 0,
    fetch: () => new Response('<!doctype html><title>form</title><button id="save">Save</button>', { headers: { "content-type": "text/html" } }),
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "browser validation", {
    BASE_URL: `http://127.0.0.1:${target.port}`,
    BAD_CSS: "div[",
    BAD_PATTERN: "(a",
    GOOD: "#save",
  }));
}, 30_000);

afterAll(async () => {
  await s.stop();
  target.stop(true);
});

const browser = (steps: unknown[]) => ({ name: `v-${crypto.randomUUID().slice(0, 8)}`, kind: "browser", environment: "test", steps });

type ErrorBody = { error: string; message: string; details: { path: string; message: string }[] };

describe("refused when saved", () => {
  const cases: [string, unknown, string, string][] = [
    ["unclosed attribute", { click: "div[" }, "click", "not a valid CSS selector"],
    ["unbalanced parenthesis", { click: "css=a:not(.x" }, "click", "not a valid CSS selector"],
    ["two combinators", { hover: "a > > b" }, "hover", "not a valid CSS selector"],
    ["empty chain part", { check: "css=a >> " }, "check", "empty"],
    ["unknown role", { click: 'role=buton[name="Save"]' }, "click", '"buton" is not an ARIA role'],
    ["role that does not read", { click: "role=button[name=Save]" }, "click", "write role=button or role=button[name="],
    ["unclosed quote in text=", { fill: { locator: 'text="Email', value: "x" } }, "fill.locator", "never closed"],
    ["empty label=", { uncheck: "label=  " }, "uncheck", "needs a value"],
    ["unknown form", { expect: { count: { locator: "tesid=row", equals: 1 } } }, "expect.count.locator", '"tesid=" is not a locator form'],
    ["bad nth", { expect: { visible: "li >> nth=first" } }, "expect.visible", "whole number"],
    ["unclosed bracket in xpath", { wait_for: { locator: "xpath=//a[@id='x'" } }, "wait_for.locator", "never closed"],
    ["select locator", { select: { locator: "select[", value: "a" } }, "select.locator", "not a valid CSS selector"],
    ["press locator", { press: { locator: "role=nope", key: "Enter" } }, "press.locator", "not an ARIA role"],
    ["invalid pattern", { expect: { url: { matches: "(unclosed" } } }, "expect.url.matches", "missing closing )"],
    ["lookaround pattern", { wait_for: { url: { matches: "a(?!b)" } } }, "wait_for.url.matches", "no backreferences or lookaround"],
    ["url neither exact nor a path", { expect: { url: "dashboard" } }, "expect.url", "neither an exact URL nor a path"],
  ];

  test.each(cases)("%s: a 400 naming the step and the field", async (_name, step, field, words) => {
    const res = await s.call("POST", `/projects/${project}/automations`, browser([{ goto: "/" }, step]));
    const body = await json<ErrorBody>(res, 400);
    expect(body.error).toBe("invalid_request");
    expect(body.details).toEqual([{ path: `body.steps.1.${field}`, message: expect.stringContaining(words) }]);
  });

  test("the same on update, and the automation keeps its steps", async () => {
    const created = await json<{ id: string; steps: unknown[] }>(
      await s.call("POST", `/projects/${project}/automations`, browser([{ goto: "/" }, { click: "#save" }])),
      201,
    );
    const res = await s.call("PATCH", `/projects/${project}/automations/${created.id}`, {
      steps: [{ goto: "/" }, { click: "#save" }, { click: "role=buton" }],
    });
    expect((await json<ErrorBody>(res, 400)).details).toEqual([{ path: "body.steps.2.click", message: expect.stringContaining("not an ARIA role") }]);
    const now = await json<{ steps: unknown[] }>(await s.call("GET", `/projects/${project}/automations/${created.id}`));
    expect(now.steps).toEqual(created.steps);
  });

  test("every documented locator form, Playwright chains and the generators' own locators are accepted", async () => {
    const locators = [
      "#save",
      "css=#save",
      "css=li:visible",
      "button.primary[type=submit]",
      "text=Save",
      'text="Save"',
      "label=Email",
      'label="Email"',
      "role=button",
      'role=button[name="Save"]',
      "role=heading[name='A \\'quoted\\' title']",
      "testid=row",
      "xpath=//button[@id='save']",
      "#list >> nth=0",
      "article:has(h2) >> text=More",
      'css=select[name="team"]',
      'internal:role=button[name="Sign in"s] >> internal:or="internal:role=link[name=\\"Sign in\\"s]"',
    ];
    const res = await s.call(
      "POST",
      `/projects/${project}/automations`,
      browser([{ goto: "/" }, ...locators.map((l) => ({ expect: { count: { locator: l, equals: 0 } } }))]),
    );
    expect(res.status).toBe(201);
  });
});

describe("checked after interpolation at run time", () => {
  test("a locator that is invalid once {{…}} is filled in errors the step, naming the field", async () => {
    const run = await runToEnd(s, project, browser([{ goto: "/" }, { click: "{{GOOD}}" }, { click: "{{BAD_CSS}}" }, { screenshot: "never" }]));
    expect(run.steps.map((x) => x.status)).toEqual(["passed", "passed", "error", "skipped"]);
    expect(run.steps[2]?.message).toStartWith('click: "div[" is not a valid locator: ');
  }, 60_000);

  test("a pattern that is invalid once {{…}} is filled in errors the step, naming the field", async () => {
    const run = await runToEnd(s, project, browser([{ goto: "/" }, { expect: { url: { matches: "{{BAD_PATTERN}}" } } }]));
    expect(run.steps[1]?.status).toBe("error");
    expect(run.steps[1]?.message).toContain("expect.url.matches: /(a/ is not a pattern svc can run");
  }, 60_000);
});
