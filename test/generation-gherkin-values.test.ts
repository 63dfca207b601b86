// The gherkin phrases `the response field "a.b" should be …` with true, false, null and a negative decimal, and
// `I send PUT/PATCH/DELETE "…"`: compiled into the right steps, then RUN by the run engine against a local target
// that answers each method differently, passing when the values match and failing when they do not.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { automationsOf, createFeature, createProject, generate, json, runToEnd } from "./helpers/gen-flow";
import { startTestServer, type TestServer } from "./helpers/server";

let t: TestServer;
let target: ReturnType<typeof Bun.serve>;
let project: string;
const methodsSeen: string[] = [];

/** Each method answers its own body: a request sent with the wrong method gets 405 and fails its status check. */
const ANSWERS: Record<string, unknown> = {
  PUT: { method: "PUT", a: { b: true } },
  PATCH: { method: "PATCH", a: { c: false, d: null } },
  DELETE: { method: "DELETE", a: { e: -2.75 } },
};

const CRITERIA = `Feature: Values
  Scenario: Put a thing
    When I send PUT "/things/7"
    Then the response status should be 200
    And the response field "a.b" should be true
    And the response field "method" should be "PUT"

  Scenario: Patch a thing
    When I send PATCH "/things/7"
    Then the response status should be 200
    And the response field "a.c" should be false
    And the response field "a.d" should be null

  Scenario: Delete a thing
    When I send delete "/things/7"
    Then the response status should be 200
    And the response field "a.e" should be -2.75

  Scenario: true is not false
    When I send PUT "/things/7"
    Then the response field "a.b" should be false

  Scenario: false is not null
    When I send PATCH "/things/7"
    Then the response field "a.c" should be null

  Scenario: null is not false
    When I send PATCH "/things/7"
    Then the response field "a.d" should be false

  Scenario: a missing field is not null
    When I send PATCH "/things/7"
    Then the response field "a.missing" should be null

  Scenario: the sign counts
    When I send DELETE "/things/7"
    Then the response field "a.e" should be 2.75
`;

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      methodsSeen.push(req.method);
      const answer = ANSWERS[req.method];
      if (new URL(req.url).pathname !== "/things/7") return new Response("not found", { status: 404 });
      return answer ? Response.json(answer) : Response.json({ error: "method not allowed" }, { status: 405 });
    },
  });
  t = await startTestServer();
  project = await createProject(t, "values");
  await json(await t.call("POST", `/projects/${project}/environments`, { name: "target", variables: { BASE_URL: `http://127.0.0.1:${target.port}` } }), 201);
});
afterAll(async () => {
  await t.stop();
  await target.stop(true);
});

describe("gherkin values and methods", () => {
  test("true, false, null, a negative decimal and PUT/PATCH/DELETE compile to the right steps, and run", async () => {
    const feature = await createFeature(t, project, { name: "Values", acceptance_criteria: CRITERIA });
    const g = await generate(t, project, feature, "gherkin");
    expect({ status: g.status, warnings: g.warnings }).toEqual({ status: "succeeded", warnings: [] });
    const autos = await automationsOf(t, project, g);
    const byName = Object.fromEntries(autos.map((a) => [a.name, a]));
    expect(autos.map((a) => a.kind)).toEqual(autos.map(() => "http"));
    expect(byName["Put a thing"]?.steps).toEqual([
      {
        name: "PUT /things/7",
        request: { method: "PUT", url: "/things/7" },
        expect: [{ status: 200 }, { json: "$.a.b", equals: true }, { json: "$.method", equals: "PUT" }],
      },
    ]);
    expect(byName["Patch a thing"]?.steps).toEqual([
      {
        name: "PATCH /things/7",
        request: { method: "PATCH", url: "/things/7" },
        expect: [{ status: 200 }, { json: "$.a.c", equals: false }, { json: "$.a.d", equals: null }],
      },
    ]);
    // The method is upper-cased whatever its case in the criteria.
    expect(byName["Delete a thing"]?.steps).toEqual([
      {
        name: "DELETE /things/7",
        request: { method: "DELETE", url: "/things/7" },
        expect: [{ status: 200 }, { json: "$.a.e", equals: -2.75 }],
      },
    ]);
    expect(byName["the sign counts"]?.steps[0]?.expect).toEqual([{ json: "$.a.e", equals: 2.75 }]);

    methodsSeen.length = 0;
    for (const name of ["Put a thing", "Patch a thing", "Delete a thing"]) {
      const run = await runToEnd(t, project, byName[name]?.id ?? "", "target");
      expect({ name, status: run.status, failed: run.steps?.filter((s) => s.status !== "passed") }).toEqual({ name, status: "passed", failed: [] });
    }
    expect(methodsSeen).toEqual(["PUT", "PATCH", "DELETE"]);

    // The same phrases fail when the value differs: true/false, false/null, null/absent and the sign are told apart.
    for (const [name, message] of [
      ["true is not false", "$.a.b: expected false, got true"],
      ["false is not null", "$.a.c: expected null, got false"],
      ["null is not false", "$.a.d: expected false, got null"],
      ["a missing field is not null", "$.a.missing: expected null, got nothing"],
      ["the sign counts", "$.a.e: expected 2.75, got -2.75"],
    ] as const) {
      const run = await runToEnd(t, project, byName[name]?.id ?? "", "target");
      const failed = run.steps?.find((s) => s.status === "failed");
      expect({ name, status: run.status, message: failed?.message }).toEqual({ name, status: "failed", message });
    }
  }, 120_000);
});
