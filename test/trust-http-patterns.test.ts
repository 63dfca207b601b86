// Member-written patterns (`matches`, condition `matches`, JSON Schema `pattern` and `patternProperties`) run in
// linear time: a catastrophic pattern on a 1 KB body leaves the API responsive, and what the linear engine cannot
// compile (backreferences, lookaround) is refused when saved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { startTestServer, type TestServer } from "./helpers/server";
import { createAutomation, getRun, projectWithEnv, runToEnd, startRun } from "./helpers/runs";

const EVIL = "^(a?){30}a{30}$";
const A_KB = "a".repeat(1000);

let s: TestServer;
let target: Server<undefined>;
let project: string;

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const p = new URL(req.url).pathname;
      if (p === "/text") return new Response(A_KB, { headers: { "content-type": "text/plain" } });
      if (p === "/string") return Response.json(A_KB);
      if (p === "/keys") return Response.json({ [A_KB]: 1 });
      if (p === "/pair") return Response.json({ a: "x", b: "y" });
      return Response.json({ error: "no such route" }, { status: 404 });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "patterns", { BASE_URL: `http://127.0.0.1:${target.port}` }));
});
afterAll(async () => {
  await s.stop();
  await target.stop(true);
});

const http = (steps: unknown[]) => ({ name: `p-${crypto.randomUUID().slice(0, 8)}`, kind: "http", environment: "test", steps, timeout_ms: 60_000 });

describe("catastrophic patterns", () => {
  test("the API stays responsive while five of them run against a 1 KB body, and the verdict is right", async () => {
    const id = await createAutomation(
      s,
      project,
      http([
        {
          request: { url: "/text" },
          expect: [
            { body: { matches: EVIL } },
            { body: { not_equals: "" } },
            { header: "content-type", matches: "^text/" },
            `[BODY] matches ${EVIL}`,
            { body: { matches: EVIL } },
            { body: { matches: EVIL } },
            { body: { matches: "^a{1000}$" } },
          ],
        },
        { request: { url: "/string" }, expect: [{ schema: { type: "string", pattern: EVIL } }] },
        { request: { url: "/keys" }, expect: [{ schema: { type: "object", patternProperties: { [EVIL]: { type: "string" } } } }] },
      ]),
    );
    // Every API call from the start of the run to its end is timed: the server runs in this process, so a
    // stalled event loop shows in whichever call was waiting at the time.
    let slowest = 0;
    const timed = async <T>(call: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const out = await call();
      slowest = Math.max(slowest, performance.now() - t0);
      return out;
    };
    const runId = await timed(() => startRun(s, project, id));
    let run = await timed(() => getRun(s, project, runId));
    while (run.status === "queued" || run.status === "running") {
      const health = await timed(() => fetch(`${s.url}/healthz`));
      expect(health.status).toBe(200);
      run = await timed(() => getRun(s, project, runId));
    }
    expect(slowest).toBeLessThan(2000);
    expect(run.status).toBe("failed");
    const [first] = run.steps;
    expect(first?.assertions?.map((a) => a.passed)).toEqual([false, true, true, false, false, false, true]);
    expect(first?.message).toStartWith(`body: expected to match /${EVIL}/, got "aaaa`);
    // The later steps were skipped after the failure: run them on their own for their verdicts.
    const schema = await runToEnd(s, project, http([{ request: { url: "/string" }, expect: [{ schema: { type: "string", pattern: EVIL } }] }]));
    expect(schema.steps[0]?.message).toStartWith("schema: expected the body to match the JSON Schema, got $ must match pattern");
    const keys = await runToEnd(
      s,
      project,
      http([{ request: { url: "/keys" }, expect: [{ schema: { type: "object", patternProperties: { [EVIL]: { type: "string" } } } }] }]),
    );
    expect(keys.steps[0]?.message).toBeNull();
    expect(keys.status).toBe("passed");
  }, 120_000);

  test("each pattern of one JSON Schema is checked as written (two patterns do not share one)", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/pair" },
          expect: [{ schema: { type: "object", properties: { a: { type: "string", pattern: "^x$" }, b: { type: "string", pattern: "^y$" } } } }],
        },
      ]),
    );
    expect(run.steps[0]?.message).toBeNull();
    expect(run.status).toBe("passed");
    const failing = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/pair" },
          expect: [{ schema: { type: "object", properties: { a: { type: "string", pattern: "^x$" }, b: { type: "string", pattern: "^z$" } } } }],
        },
      ]),
    );
    expect(failing.steps[0]?.message).toBe('schema: expected the body to match the JSON Schema, got /b must match pattern "^z$"');
  });
});

describe("patterns the linear engine cannot run are refused when saved", () => {
  const cases: [string, unknown, string][] = [
    ["a backreference in matches", { json: "$.a", matches: "(a)\\1" }, "body.steps.0.expect.0.matches"],
    ["a lookahead in a body matches", { body: { matches: "foo(?=bar)" } }, "body.steps.0.expect.0.body.matches"],
    ["a lookbehind in a header matches", { header: "x-a", matches: "(?<=a)b" }, "body.steps.0.expect.0.matches"],
    ["a lookahead in a status matches", { status: { matches: "^2(?!04)" } }, "body.steps.0.expect.0.status.matches"],
    ["a condition's matches", "[BODY] matches (x)\\1", "body.steps.0.expect.0"],
    ["a JSON Schema pattern", { schema: { type: "string", pattern: "(?=a)" } }, "body.steps.0.expect.0.schema"],
    ["a JSON Schema patternProperties key", { schema: { patternProperties: { "(a)\\1": { type: "string" } } } }, "body.steps.0.expect.0.schema"],
  ];
  for (const [what, assertion, path] of cases) {
    test(what, async () => {
      const res = await s.call("POST", `/projects/${project}/automations`, http([{ request: { url: "/text" }, expect: [assertion] }]));
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.error).toBe("invalid_request");
      expect(body.details).toEqual([{ path, message: expect.stringContaining("is not a pattern svc can run (RE2 syntax; no backreferences or lookaround)") }]);
    });
  }
});
