// An invalid regular expression, JSON path or JSON Schema in an http step is refused when saved (400 naming the
// step and field), never found at run time; a pattern with {{…}} is checked once filled in. Generated drafts
// pass the same checks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { automationsOf, createFeature, generate } from "./helpers/gen-flow";
import { startTestServer, type TestServer } from "./helpers/server";
import { projectWithEnv, runToEnd } from "./helpers/runs";

let s: TestServer;
let target: Server<undefined>;
let project: string;
let requests = 0;

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      requests++;
      return Response.json({ id: 1, name: "apple" });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "validation", { BASE_URL: `http://127.0.0.1:${target.port}`, PREFIX: "app", BROKEN: "(" }));
});
afterAll(async () => {
  await s.stop();
  await target.stop(true);
});

const http = (steps: unknown[]) => ({ name: `v-${crypto.randomUUID().slice(0, 8)}`, kind: "http", environment: "test", steps });

describe("refused when saved, naming the step and field", () => {
  const cases: [string, Record<string, unknown>, string, string][] = [
    [
      "an invalid regular expression",
      { expect: [{ status: 200 }, { json: "$.name", matches: "app(" }] },
      "body.steps.0.expect.1.matches",
      "/app(/ is not a pattern svc can run",
    ],
    ["an invalid regular expression in a condition", { expect: ["[BODY].name matches [a-"] }, "body.steps.0.expect.0", "/[a-/ is not a pattern svc can run"],
    [
      "an invalid JSON path in an assertion",
      { expect: [{ json: "$.items[", equals: 1 }] },
      "body.steps.0.expect.0.json",
      'invalid JSON path "$.items[": "[" is not closed',
    ],
    ["an invalid JSON path in a condition", { expect: ["[BODY].items[x] == 1"] }, "body.steps.0.expect.0", 'invalid JSON path "$.items[x]"'],
    ["an invalid JSON path in a capture", { capture: { id: "$.a..b" } }, "body.steps.0.capture.id", 'invalid JSON path "$.a..b"'],
    ["an invalid JSON path in a capture object", { capture: { id: { json: "$[nope]" } } }, "body.steps.0.capture.id.json", 'invalid JSON path "$[nope]"'],
    ["an invalid JSON Schema type", { expect: [{ schema: { type: "thing" } }] }, "body.steps.0.expect.0.schema", "the JSON Schema is invalid: "],
    [
      "a JSON Schema with a reference to nowhere",
      { expect: [{ schema: { $ref: "#/definitions/missing" } }] },
      "body.steps.0.expect.0.schema",
      "the JSON Schema is invalid: ",
    ],
  ];
  for (const [what, step, path, message] of cases) {
    test(what, async () => {
      const res = await s.call("POST", `/projects/${project}/automations`, http([{ request: { url: "/item" }, ...step }]));
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error).toBe("invalid_request");
      expect(body.details).toEqual([{ path, message: expect.stringContaining(message) }]);
      expect(body.message).toContain(path);
    });
  }

  test("the same steps written correctly are saved", async () => {
    const res = await s.call(
      "POST",
      `/projects/${project}/automations`,
      http([
        {
          request: { url: "/item" },
          expect: [
            { json: "$.name", matches: "app" },
            "[BODY].name matches [a-z]",
            { json: "$['id']", equals: 1 },
            { schema: { type: "object", definitions: { n: { type: "string" } }, properties: { name: { $ref: "#/definitions/n" } } } },
          ],
          capture: { id: "$.id", also: { json: "id" }, loc: "header:location" },
        },
      ]),
    );
    expect(res.status).toBe(201);
  });
});

describe("a pattern with {{…}} is checked when filled in", () => {
  test("it is saved as written and works once filled in", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "/item" }, expect: [{ json: "$.name", matches: "^{{PREFIX}}le$" }] }]));
    expect(run.steps[0]?.message).toBeNull();
    expect(run.status).toBe("passed");
  });

  test("filled in to something that does not compile, the step is an error naming the field, before any request", async () => {
    const before = requests;
    const run = await runToEnd(s, project, http([{ request: { url: "/item" }, expect: [{ status: 200 }, { body: { matches: "x{{BROKEN}}" } }] }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.status).toBe("error");
    expect(run.steps[0]?.message).toStartWith("expect.1.body.matches: with its {{…}} filled in, /x(/ is not a pattern svc can run");
    expect(requests).toBe(before);
  });
});

describe("generated drafts pass the same checks", () => {
  test("a scenario that would read a file or use a broken JSON path becomes a warning, not an automation", async () => {
    const feature = await createFeature(s, project, {
      name: "Files",
      acceptance_criteria: [
        "Feature: Files",
        "  Scenario: Read the password file",
        '    When I send GET "file:///etc/passwd"',
        "    Then the response status should be 200",
        "  Scenario: A broken path",
        '    When I send GET "/item"',
        '    Then the response field "items[" should be 1',
        "  Scenario: A fine one",
        '    When I send GET "/item"',
        "    Then the response status should be 200",
      ].join("\n"),
    });
    const g = await generate(s, project, feature);
    expect(g.status).toBe("succeeded");
    const autos = await automationsOf(s, project, g);
    expect(autos.map((a) => a.name)).toEqual(["A fine one"]);
    const messages = g.warnings.map((w) => w.message).join("\n");
    expect(messages).toContain('No automation for scenario "Read the password file"');
    expect(messages).toContain("only http and https URLs can be requested");
    expect(messages).toContain('No automation for scenario "A broken path"');
    expect(messages).toContain('invalid JSON path "$.items["');
  });
});
