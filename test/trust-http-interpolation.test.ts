// {{NAME}} (variables, secrets, earlier captures) is filled in in assertion values too: equals, contains, matches,
// header values and conditions. A value that is exactly one placeholder keeps the variable's JSON type.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
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
      return Response.json({ id: 1, name: "apple", tags: ["red", 7], token: "tok-5e3c1a" }, { headers: { "x-id": "1", "x-name": "apple" } });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(
    s,
    "interpolated assertions",
    { BASE_URL: `http://127.0.0.1:${target.port}`, FRUIT: "apple", PART: "ppl", SEVEN: "7" },
    { TOKEN: "tok-5e3c1a" },
  ));
});
afterAll(async () => {
  await s.stop();
  await target.stop(true);
});

const http = (steps: unknown[]) => ({ name: `i-${crypto.randomUUID().slice(0, 8)}`, kind: "http", environment: "test", steps });
const capture = { request: { url: "/item" }, capture: { item_id: "$.id", item_name: "$.name", tags: "$.tags" } };

describe("assertion values with {{…}}", () => {
  test("captures, variables and secrets fill equals, contains, matches, header values and conditions", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        capture,
        {
          request: { url: "/item" },
          expect: [
            { json: "$.id", equals: "{{item_id}}" },
            { json: "$.name", equals: "{{FRUIT}}" },
            { json: "$.name", not_equals: "{{PART}}" },
            { json: "$.name", contains: "{{PART}}" },
            { json: "$.name", matches: "^{{FRUIT}}$" },
            { json: "$.tags", equals: "{{tags}}" },
            { json: "$.token", equals: "{{TOKEN}}" },
            { json: "$.name", equals: "{{item_name}}" },
            { header: "x-id", equals: "{{item_id}}" },
            { header: "x-name", matches: "^a{{PART}}e$" },
            { body: { contains: '"name":"{{item_name}}"' } },
            { status: { equals: 200 } },
            "[BODY].id == {{item_id}}",
            "[BODY].name == {{item_name}}",
            "[HEADER].x-name contains {{PART}}",
            "[BODY].name matches ^a{{PART}}",
          ],
        },
      ]),
    );
    expect(run.steps[1]?.message).toBeNull();
    expect(run.status).toBe("passed");
    // The results show the value compared, with the secret masked.
    const results = run.steps[1]?.assertions ?? [];
    expect(results[0]).toMatchObject({ assertion: "$.id == 1", expected: 1, passed: true });
    expect(results[6]).toMatchObject({ expected: "***", passed: true });
  });

  test("a value that is exactly one placeholder takes the variable's JSON type; text around it makes text", async () => {
    const typed = await runToEnd(s, project, http([capture, { request: { url: "/item" }, expect: [{ json: "$.name", equals: "{{item_id}}" }] }]));
    expect(typed.status).toBe("failed");
    expect(typed.steps[1]?.message).toBe('$.name: expected 1, got "apple"');
    const text = await runToEnd(s, project, http([capture, { request: { url: "/item" }, expect: [{ json: "$.id", equals: "#{{item_id}}" }] }]));
    expect(text.steps[1]?.message).toBe('$.id: expected "#1", got 1');
    // An environment variable is text: "7" is not the number 7 in the tags, but contains finds it in a string.
    const env = await runToEnd(s, project, http([{ request: { url: "/item" }, expect: [{ json: "$.tags", contains: "{{SEVEN}}" }] }]));
    expect(env.steps[0]?.message).toBe('$.tags: expected to contain "7", got ["red",7]');
  });

  test("an undefined name in an assertion stops the step before its request, naming the variable", async () => {
    const before = requests;
    const run = await runToEnd(s, project, http([{ request: { url: "/item" }, expect: [{ json: "$.id", equals: "{{NOPE}}" }] }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toContain("{{NOPE}} is not defined");
    expect(requests).toBe(before);
  });
});

describe("what a step sends and records is bounded", () => {
  test("a captured value too large for a URL or headers is refused before sending; long values are kept cut in the result", async () => {
    const seen: { url: number; headers: number }[] = [];
    const big = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        seen.push({ url: req.url.length, headers: [...req.headers].reduce((n, [k, v]) => n + k.length + v.length, 0) });
        return Response.json({ big: "x".repeat(100_000), medium: "m".repeat(10_000) });
      },
    });
    try {
      const base = `http://127.0.0.1:${big.port}`;
      const grab = { request: { url: `${base}/big` }, capture: { big: "$.big", medium: "$.medium" } };
      const inUrl = await runToEnd(s, project, http([grab, { request: { url: `${base}/again?v={{big}}` } }]));
      expect(inUrl.status).toBe("error");
      expect(inUrl.steps[1]?.message).toContain("the request's URL is");
      expect(inUrl.steps[1]?.message).toContain("svc sends URLs of at most 64 KiB; send large values in the body");
      const inHeaders = await runToEnd(s, project, http([grab, { request: { url: `${base}/again`, headers: { "x-big": "{{big}}" } } }]));
      expect(inHeaders.status).toBe("error");
      expect(inHeaders.steps[1]?.message).toContain("svc sends at most 64 KiB of headers");
      expect(seen).toHaveLength(2); // only the captures went out
      // Within the bounds it goes out, and the result keeps the start of it.
      const medium = await runToEnd(s, project, http([grab, { request: { url: `${base}/again?v={{medium}}`, headers: { "x-medium": "{{medium}}" } } }]));
      expect(medium.status).toBe("passed");
      // (Sent: this server refuses a 10 KB request line itself, but an answer came.)
      expect(medium.steps[1]?.response?.status).toBeGreaterThanOrEqual(200);
      const sent = medium.steps[1]?.request as { url: string; headers: Record<string, string> };
      expect(sent.url.length).toBeLessThanOrEqual(8 * 1024 + 1);
      expect(sent.url.endsWith("…")).toBe(true);
      expect(sent.headers["x-medium"]?.length).toBeLessThanOrEqual(2 * 1024 + 1);
    } finally {
      await big.stop(true);
    }
  });
});
