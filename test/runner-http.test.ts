// The run engine on http automations: every assertion kind passing and failing, captures, interpolation, secrets.
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
  ({ project } = await projectWithEnv(s, "http runs", { BASE_URL: target.url, ITEM: "1" }, { API_TOKEN: "tok-9f8e7d6c5b" }));
});
afterAll(async () => {
  await s.stop();
  await target.stop();
});

const http = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `a-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps,
  ...extra,
});

describe("http steps", () => {
  test("the canonical example passes: status, json, header, duration, capture into the next request", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        {
          name: "get item",
          request: { method: "GET", url: "/items/{{ITEM}}", headers: { accept: "application/json" } },
          expect: [{ status: 200 }, { json: "$.id", equals: 1 }, { header: "content-type", contains: "application/json" }, { duration_ms: { lt: 1000 } }],
          capture: { item_name: "$.name" },
        },
        {
          name: "create item",
          request: { method: "POST", url: "/items", json: { name: "{{item_name}} copy" } },
          expect: [{ status: 201 }, { json: "$.name", matches: "copy$" }],
        },
      ]),
    );
    expect(run.status).toBe("passed");
    expect(run.summary).toEqual({ steps: 2, passed: 2, failed: 0, skipped: 0 });
    expect(run.steps[1]?.request?.body).toBe('{"name":"apple copy"}');
    expect(run.steps[0]?.request?.url).toBe(`${target.url}/items/1`);
    expect(run.steps[0]?.response?.status).toBe(200);
    expect(run.steps[0]?.assertions?.every((a) => a.passed)).toBe(true);
    expect(run.attempts).toEqual([expect.objectContaining({ attempt: 1, status: "passed" })]);
    expect(run.duration_ms).toBeGreaterThanOrEqual(0);
    // The server's own engine executed it: no runner.
    expect(run.runner).toBeNull();
  });

  test("every json operator passes on matching values", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/items" },
          expect: [
            { json: "$.items[0].name", equals: "apple" },
            { json: "$.items[1].id", not_equals: 1 },
            { json: "$.items[0].tags", contains: "red" },
            { json: "$.items[2].name", contains: "hee" },
            { json: "$.items[-1].name", matches: "^ch" },
            { json: "$.total", exists: true },
            { json: "$.missing", exists: false },
            { json: "$.items", type: "array" },
            { json: "$.items[0].price", gt: 2, gte: 3, lt: 4, lte: 3 },
            { json: "$.items[*].id", equals: [1, 2, 3] },
            { json: "$.items.length", equals: 3 },
            { body: { contains: "bread" } },
            { header: "x-total", equals: "3" },
            { header: "x-total", gt: 2 },
            { status: { gte: 200, lt: 300 } },
            { schema: { type: "object", required: ["items", "total"], properties: { total: { type: "integer" } } } },
          ],
        },
      ]),
    );
    expect(run.steps[0]?.message).toBeNull();
    expect(run.status).toBe("passed");
    expect(run.steps[0]?.assertions?.length).toBe(20);
  });

  test("each failing assertion says expected and actual in one line", async () => {
    const cases: [unknown, string][] = [
      [{ status: 201 }, "status: expected 201, got 200"],
      [{ json: "$.id", equals: 2 }, "$.id: expected 2, got 1"],
      [{ json: "$.id", not_equals: 1 }, "$.id: expected anything but 1, got 1"],
      [{ json: "$.name", contains: "pear" }, '$.name: expected to contain "pear", got "apple"'],
      [{ json: "$.name", matches: "^b" }, '$.name: expected to match /^b/, got "apple"'],
      [{ json: "$.nope", exists: true }, "$.nope: expected to exist, got nothing"],
      [{ json: "$.name", type: "number" }, '$.name: expected type number, got string "apple"'],
      [{ json: "$.price", gt: 10 }, "$.price: expected > 10, got 3"],
      [{ json: "$.price", lt: 1 }, "$.price: expected < 1, got 3"],
      [{ header: "content-type", contains: "text/html" }, 'header content-type: expected to contain "text/html", got "application/json;charset=utf-8"'],
      [{ body: { contains: "banana" } }, 'body: expected to contain "banana"'],
      [{ duration_ms: { lt: 0 } }, "duration_ms: expected < 0, got"],
      [{ schema: { type: "object", required: ["sku"] } }, "schema: expected the body to match the JSON Schema, got $ must have required property 'sku'"],
    ];
    for (const [assertion, message] of cases) {
      const run = await runToEnd(s, project, http([{ request: { url: "/items/1" }, expect: [assertion] }]));
      expect(run.status).toBe("failed");
      expect(run.steps[0]?.status).toBe("failed");
      expect(run.steps[0]?.message ?? "").toContain(message);
      expect(run.steps[0]?.message ?? "").not.toContain("\n");
      const a = run.steps[0]?.assertions?.[0];
      expect(a?.passed).toBe(false);
    }
  });

  test("a JSON value keeps its type: a number become a string fails a comparison, and a missing value is not anything but 1", async () => {
    // /echo answers the query's values as strings: {"query": {"price": "1.5"}}.
    const typed = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/echo?price=1.5" },
          expect: [
            { json: "$.query.price", gt: 1 },
            { json: "$.query.nope", not_equals: 1 },
          ],
        },
      ]),
    );
    expect(typed.status).toBe("failed");
    expect(typed.steps[0]?.assertions?.map((a) => [a.passed, a.message])).toEqual([
      [false, '$.query.price: expected > 1, got "1.5"'],
      [false, "$.query.nope: expected anything but 1, got nothing"],
    ]);
    // A header is text: its number is compared as a number.
    const header = await runToEnd(s, project, http([{ request: { url: "/items/1" }, expect: [{ header: "content-length", gt: 1 }] }]));
    expect(header.status).toBe("passed");
  });

  test("a body regular expression passes when the text matches and fails with expected and actual in one line", async () => {
    const passes = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/lines" },
          expect: [{ body: { matches: "order \\d+ shipped" } }, { body: { matches: "^first line\\nsecond" } }, { body: { matches: "third line\\n$" } }],
        },
      ]),
    );
    expect(passes.steps[0]?.message).toBeNull();
    expect(passes.status).toBe("passed");
    expect(passes.steps[0]?.assertions?.map((a) => a.passed)).toEqual([true, true, true]);

    const fails = await runToEnd(s, project, http([{ request: { url: "/lines" }, expect: [{ body: { matches: "order \\d+ cancelled" } }] }]));
    expect(fails.status).toBe("failed");
    // The multi-line body is shown JSON-escaped, so the whole message stays on one line.
    expect(fails.steps[0]?.message).toBe('body: expected to match /order \\d+ cancelled/, got "first line\\nsecond line: order 42 shipped\\nthird line\\n"');
    expect(fails.steps[0]?.assertions?.[0]).toMatchObject({
      passed: false,
      expected: "order \\d+ cancelled",
      actual: "first line\nsecond line: order 42 shipped\nthird line\n",
    });

    // A pattern that is not a regular expression is refused when saved, naming the field.
    const invalid = await s.call(
      "POST",
      `/projects/${project}/automations`,
      http([{ request: { url: "/lines" }, expect: [{ body: { matches: "order (" } }] }]),
    );
    expect(invalid.status).toBe(400);
    const refused = await invalid.json();
    expect(refused.details).toEqual([
      { path: "body.steps.0.expect.0.body.matches", message: expect.stringContaining("/order (/ is not a pattern svc can run") },
    ]);
  });

  test("gte and lte pass on the bound itself and fail just past it, on json values, numeric headers and the status", async () => {
    const passes = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/items/3" },
          expect: [
            { json: "$.price", gte: 12 },
            { json: "$.price", lte: 12 },
            { json: "$.price", gte: 11.5, lte: 12.5 },
            { status: { gte: 200, lte: 200 } },
            { header: "content-length", gte: 10 },
          ],
        },
      ]),
    );
    expect(passes.steps[0]?.message).toBeNull();
    expect(passes.status).toBe("passed");
    expect(passes.steps[0]?.assertions?.map((a) => a.assertion)).toEqual([
      "$.price >= 12",
      "$.price <= 12",
      "$.price >= 11.5",
      "$.price <= 12.5",
      "status >= 200",
      "status <= 200",
      "header content-length >= 10",
    ]);

    const cases: [unknown, string, unknown, unknown][] = [
      [{ json: "$.price", gte: 13 }, "$.price: expected >= 13, got 12", 13, 12],
      [{ json: "$.price", lte: 11 }, "$.price: expected <= 11, got 12", 11, 12],
      [{ status: { lte: 199 } }, "status: expected <= 199, got 200", 199, 200],
      [{ header: "content-length", gte: 100000 }, 'header content-length: expected >= 100000, got "', 100000, undefined],
      [{ json: "$.name", gte: 1 }, '$.name: expected >= 1, got "cheese"', 1, "cheese"],
      [{ json: "$.missing", lte: 1 }, "$.missing: expected <= 1, got nothing", 1, undefined],
    ];
    for (const [assertion, message, expected, actual] of cases) {
      const run = await runToEnd(s, project, http([{ request: { url: "/items/3" }, expect: [assertion] }]));
      expect(run.status).toBe("failed");
      expect(run.steps[0]?.message ?? "").toStartWith(message);
      expect(run.steps[0]?.message ?? "").not.toContain("\n");
      const a = run.steps[0]?.assertions?.[0];
      expect(a?.passed).toBe(false);
      expect(a?.expected).toBe(expected);
      if (actual !== undefined) expect(a?.actual).toBe(actual);
    }
  });

  test("a failure skips the later steps and the run is failed", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        { name: "first", request: { url: "/items/9" }, expect: [{ status: 200 }] },
        { name: "second", request: { url: "/items/1" } },
        { name: "third", request: { url: "/items/2" } },
      ]),
    );
    expect(run.status).toBe("failed");
    expect(run.steps.map((x) => x.status)).toEqual(["failed", "skipped", "skipped"]);
    expect(run.summary).toEqual({ steps: 3, passed: 0, failed: 1, skipped: 2 });
    expect(target.seen.some((r) => r.path === "/items/2")).toBe(false);
  });

  test("query, headers, text body and header captures are sent as written, with interpolation", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        {
          request: { method: "POST", url: "/items", json: { name: "n", id: "{{ITEM}}" } },
          expect: [{ status: 201 }],
          capture: { loc: "header:location", new_id: { json: "$.id" } },
        },
        {
          request: { method: "PUT", url: "{{BASE_URL}}/echo", query: { from: "{{loc}}", n: 5 }, headers: { "x-id": "{{new_id}}" }, body: "plain {{ITEM}}" },
          expect: [
            { json: "$.method", equals: "PUT" },
            { json: "$.query.from", matches: "^/items/\\d+$" },
            { json: "$.query.n", equals: "5" },
            { json: "$.headers['x-id']", matches: "^\\d+$" },
            { json: "$.body", equals: "plain 1" },
          ],
        },
      ]),
    );
    expect(run.steps[1]?.message ?? null).toBeNull();
    expect(run.status).toBe("passed");
    // A whole-string placeholder keeps the variable's own type; ITEM is a string variable.
    expect(JSON.parse(run.steps[0]?.request?.body ?? "{}")).toEqual({ name: "n", id: "1" });
  });

  test("secrets are sent for real but appear as *** everywhere in the results", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/echo?t={{API_TOKEN}}", headers: { authorization: "Bearer {{API_TOKEN}}" } },
          expect: [{ json: "$.headers.authorization", equals: "Bearer nope" }],
        },
      ]),
    );
    expect(run.status).toBe("failed");
    const seen = target.seen.find((r) => r.path.startsWith("/echo?t="));
    expect(seen?.headers.authorization).toBe("Bearer tok-9f8e7d6c5b");
    const text = JSON.stringify(run);
    expect(text).not.toContain("tok-9f8e7d6c5b");
    expect(run.steps[0]?.request?.headers?.authorization).toBe("Bearer ***");
    expect(run.steps[0]?.message).toContain('got "Bearer ***"');
  });

  test("a secret a URL encodes its own way (form-encoded query, normalised path) is still masked", async () => {
    const secret = "p@ss word!~'x";
    const { project: enc } = await projectWithEnv(s, "encoded secret", { BASE_URL: target.url }, { PASS: secret });
    const run = await runToEnd(s, enc, http([{ request: { url: "/echo", query: { pass: "{{PASS}}" } }, expect: [{ json: "$.query.pass", equals: "nope" }] }]));
    // Sent for real: the target decoded the very secret from the query.
    expect(target.seen.some((r) => r.path.startsWith("/echo?pass=") && new URL(`http://x${r.path}`).searchParams.get("pass") === secret)).toBe(true);
    expect(run.status).toBe("failed");
    expect(run.steps[0]?.request?.url).toBe(`${target.url}/echo?pass=***`);
    expect(run.steps[0]?.message).toBe('$.query.pass: expected "nope", got "***"');
    const text = JSON.stringify(run);
    for (const form of [secret, "p%40ss+word%21%7E%27x", "p%40ss%20word!~'x"]) expect(text).not.toContain(form);
    // The same secret inside a path the URL parser normalised (a query makes svc rebuild the URL).
    const inPath = await runToEnd(s, enc, http([{ request: { url: "/items/{{PASS}}", query: { v: 1 } }, expect: [{ status: 200 }] }]));
    expect(inPath.steps[0]?.request?.url).toBe(`${target.url}/items/***?v=1`);
    expect(JSON.stringify(inPath)).not.toContain("p@ss%20word!~'x");
  });

  test("the shortest secret allowed is masked in values without breaking the shape of the results", async () => {
    const { project: tiny } = await projectWithEnv(s, "tiny secret", { BASE_URL: target.url }, { T: "xxxxxxxx" });
    const run = await runToEnd(s, tiny, http([{ request: { url: "/echo?q=xxxxxxxx" }, expect: [{ status: 200 }] }]));
    expect(run.status).toBe("passed");
    expect(run.steps[0]?.index).toBe(0);
    expect(run.steps[0]?.request?.url).toBe(`${target.url}/echo?q=***`);
  });

  test("the response excerpt is capped and marked truncated", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "/big" }, expect: [{ status: 200 }] }]));
    expect(run.steps[0]?.response?.truncated).toBe(true);
    expect(run.steps[0]?.response?.body.length).toBe(8192);
  });

  test("a capture that finds nothing fails the step and names the path", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "/items/1" }, capture: { x: "$.nothing.here" } }, { request: { url: "/items/{{x}}" } }]));
    expect(run.status).toBe("failed");
    expect(run.steps[0]?.message).toBe("capture x: $.nothing.here is not in the response");
  });
});

describe("runs that cannot execute end error with what to do", () => {
  test("an unreachable URL", async () => {
    const dead = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
    const url = `http://127.0.0.1:${dead.port}/x`;
    await dead.stop(true);
    const run = await runToEnd(s, project, http([{ request: { url, headers: { authorization: "Bearer {{API_TOKEN}}", accept: "text/plain" } } }]));
    expect(run.status).toBe("error");
    expect(run.error).toContain(`could not reach GET ${url}`);
    expect(run.error).toContain("check that the service is running");
    // Nothing was answered: the step records the headers it asked for, its secret masked.
    expect(run.steps[0]?.request?.headers).toEqual({ authorization: "Bearer ***", accept: "text/plain" });
  });

  test("a connection closed without an answer", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "/close" } }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toContain("could not reach GET");
  });

  test("a per-step request timeout", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "/slow?ms=2000", timeout_ms: 200 } }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toContain("within 200 ms");
  });

  test("an undefined variable", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "/items/{{NOPE}}" } }]));
    expect(run.status).toBe("error");
    expect(run.error).toContain("{{NOPE}} is not defined: add it to the run's environment");
  });

  test("a relative URL without BASE_URL", async () => {
    const { project: bare } = await projectWithEnv(s, "no base", { OTHER: "x" });
    const run = await runToEnd(s, bare, http([{ request: { url: "/items/1" } }]));
    expect(run.status).toBe("error");
    expect(run.error).toContain("has no BASE_URL variable");
  });

  test("steps that no longer validate", async () => {
    const id = `aut_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
    const proj = await s.server.core.db.selectFrom("projects").select("id").where("slug", "=", project).executeTakeFirstOrThrow();
    const t = new Date().toISOString();
    await s.server.core.db
      .insertInto("automations")
      .values({
        id,
        project_id: proj.id,
        feature_id: null,
        generation_id: null,
        name: "broken",
        description: "",
        kind: "http",
        steps: JSON.stringify([{ request: { url: "/items/1" }, expect: [{ status: "two hundred" }] }]),
        environment_id: null,
        tags: "[]",
        status: "active",
        source: "manual",
        edited: 0,
        timeout_ms: 10_000,
        retries: 0,
        last_run_id: null,
        last_run_status: null,
        last_run_at: null,
        created_at: t,
        updated_at: t,
      })
      .execute();
    const res = await s.call("POST", `/projects/${project}/automations/${id}/run`, { environment: "test" });
    expect(res.status).toBe(202);
    const { waitForRun } = await import("./helpers/runs");
    const run = await waitForRun(s, project, ((await res.json()) as { id: string }).id);
    expect(run.status).toBe("error");
    expect(run.error).toContain("step 1 is invalid");
    expect(run.error).toContain("fix the automation's steps");
  });
});

describe("the condition shorthand", () => {
  test("conditions run like the assertions they stand for, and are stored in the canonical form", async () => {
    const conditions = [
      "[STATUS] == 200",
      "[STATUS] < 300",
      '[BODY].items[0].name == "apple"',
      "[BODY].items[1].id != 1",
      "[BODY].total >= 3",
      "[BODY].items[0].tags contains red",
      "[BODY].missing !exists",
      "[BODY].total exists",
      "[BODY] contains bread",
      '[BODY] matches "total":3',
      "[HEADER].content-type contains json",
      "[RESPONSE_TIME] < 5000",
    ];
    const made = await s.call("POST", `/projects/${project}/automations`, http([{ request: { url: "/items" }, expect: conditions }]));
    expect(made.status).toBe(201);
    const automation = await made.json();
    expect(automation.steps[0].expect).toEqual([
      { status: 200 },
      { status: { lt: 300 } },
      { json: "$.items[0].name", equals: "apple" },
      { json: "$.items[1].id", not_equals: 1 },
      { json: "$.total", gte: 3 },
      { json: "$.items[0].tags", contains: "red" },
      { json: "$.missing", exists: false },
      { json: "$.total", exists: true },
      { body: { contains: "bread" } },
      { body: { matches: '"total":3' } },
      { header: "content-type", contains: "json" },
      { duration_ms: { lt: 5000 } },
    ]);
    const passing = await runToEnd(s, project, http([{ request: { url: "/items" }, expect: conditions }]));
    expect(passing.steps[0]?.message).toBeNull();
    expect(passing.status).toBe("passed");

    const failing = await runToEnd(s, project, http([{ request: { url: "/items" }, expect: ["[STATUS] == 201", "[BODY].total < 3"] }]));
    expect(failing.status).toBe("failed");
    expect(failing.steps[0]?.message).toBe("status: expected 201, got 200; $.total: expected < 3, got 3");
  });

  test("a condition that does not read is a 400 naming the step and saying how to write one", async () => {
    const cases: [string, string][] = [
      ["[STATUS] = 200", "is not a condition: write [SUBJECT] OPERATOR VALUE"],
      ["[RESPONSE_TIME] < soon", '< compares numbers, not "soon"'],
      ["[STATUS] == 999", "Too big"],
      ["[HEADER] contains json", "name the header, e.g. [HEADER].content-type"],
      ["[BODY].id exists 1", "exists takes no value"],
    ];
    for (const [condition, message] of cases) {
      const res = await s.call("POST", `/projects/${project}/automations`, http([{ request: { url: "/items" }, expect: ["[STATUS] == 200", condition] }]));
      expect({ condition, status: res.status }).toEqual({ condition, status: 400 });
      const body = await res.json();
      expect(body.details).toEqual([{ path: "body.steps.0.expect.1", message: expect.stringContaining(message) }]);
      expect(body.message).toContain("body.steps.0.expect.1");
    }
  });
});
