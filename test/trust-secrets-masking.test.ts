// A secret a system under test echoes back stays hidden in the run record whatever escaping it comes back in
// (JSON's \u0026, \uXXXX, \/, any hex case; URL-encoded), and when the response excerpt cuts it in two.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { startTestServer, type TestServer } from "./helpers/server";
import { projectWithEnv, runToEnd } from "./helpers/runs";

const SECRET = "s3cr&t/é€-Zq9";
const EXCERPT = 200;

const hex4 = (c: string) => c.charCodeAt(0).toString(16).padStart(4, "0");
/** How common JSON encoders write the secret: Go (<>& as \u00XX), PHP (\/ and \uXXXX), Python (\uXXXX), upper-case hex. */
const jsonForms = (v: string): Record<string, string> => {
  const plain = JSON.stringify(v).slice(1, -1);
  return {
    go: plain.replace(/[<>&]/g, (c) => `\\u${hex4(c)}`),
    php: plain.replace(/\//g, "\\/").replace(/[^\x00-\x7f]/g, (c) => `\\u${hex4(c)}`),
    python: plain.replace(/[^\x00-\x7f]/g, (c) => `\\u${hex4(c)}`),
    upper: plain.replace(/[^\x00-\x7f&]/g, (c) => `\\u${hex4(c).toUpperCase()}`),
  };
};
/** URL encodings: lower-case hex, and a mix that leaves / and & as they are. */
const urlForms = (v: string): Record<string, string> => ({
  lower: encodeURIComponent(v).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  mixed: encodeURIComponent(v).replace(/%2F/g, "/").replace(/%26/g, "&"),
});

let s: TestServer;
let echo: Server<undefined>;
let project: string;

beforeAll(async () => {
  // The system under test: echoes the secret it was sent (the request body) in the way the path asks.
  echo = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const v = await req.text();
      const path = new URL(req.url).pathname;
      // Each form is already JSON string content: written into the document as it is.
      if (path === "/json")
        return new Response(
          `{"forms":{${Object.entries(jsonForms(v))
            .map(([k, f]) => `"${k}":"${f}"`)
            .join(",")}}}`,
        );
      if (path === "/url")
        return new Response(
          Object.entries(urlForms(v))
            .map(([k, f]) => `${k}=${f}`)
            .join("\n"),
        );
      const pad = Number(new URL(req.url).searchParams.get("pad") ?? "0");
      if (path === "/cut") return new Response(`${"x".repeat(pad)}${v}${"y".repeat(EXCERPT)}`);
      // The request body given back as a JSON string (as httpbin's `data` does): JSON inside JSON, escaped twice.
      if (path === "/echo-string") return Response.json({ data: v });
      if (path === "/cut-json") return new Response(`${"x".repeat(pad)}${jsonForms(v).php}${"y".repeat(EXCERPT)}`);
      return new Response("not found", { status: 404 });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { response_excerpt_bytes: EXCERPT } });
  ({ project } = await projectWithEnv(s, "masking", { BASE_URL: `http://127.0.0.1:${echo.port}` }, { SECRET }));
});
afterAll(async () => {
  await s.stop();
  echo.stop(true);
});

const echoed = (path: string) =>
  runToEnd(s, project, {
    name: `echo ${path} ${crypto.randomUUID().slice(0, 6)}`,
    kind: "http",
    environment: "test",
    steps: [{ request: { method: "POST", url: path, body: "{{SECRET}}" }, expect: [{ status: 200 }] }],
  });

describe("a secret echoed back", () => {
  test("JSON-escaped the ways encoders do (\\u0026, \\uXXXX in either case, \\/) is masked in the response excerpt", async () => {
    const run = await echoed("/json");
    expect(run.status).toBe("passed");
    const body = JSON.parse(run.steps[0]?.response?.body ?? "{}") as { forms: Record<string, string> };
    expect(body.forms).toEqual({ go: "***", php: "***", python: "***", upper: "***" });
    const text = JSON.stringify(run);
    for (const form of [SECRET, ...Object.values(jsonForms(SECRET))]) expect(text).not.toContain(form);
  });

  test("URL-encoded with lower-case hex, or with some characters left as they are, is masked", async () => {
    const run = await echoed("/url");
    expect(run.steps[0]?.response?.body).toBe("lower=***\nmixed=***");
    const text = JSON.stringify(run);
    for (const form of Object.values(urlForms(SECRET))) expect(text).not.toContain(form);
  });

  test("cut in two by the response excerpt, its beginning at the cut is masked too", async () => {
    for (const kept of [1, 4, 9]) {
      const run = await echoed(`/cut?pad=${EXCERPT - Buffer.byteLength(SECRET.slice(0, kept))}`);
      const body = run.steps[0]?.response?.body ?? "";
      expect(run.steps[0]?.response?.truncated).toBe(true);
      expect(body).toBe(`${"x".repeat(EXCERPT - Buffer.byteLength(SECRET.slice(0, kept)))}***`);
    }
  });

  test("cut by a failed check's message (a body that is not JSON, quoted to 100 characters), its beginning at the cut is masked", async () => {
    for (const kept of [4, 9]) {
      const run = await runToEnd(s, project, {
        name: `cut message ${kept} ${crypto.randomUUID().slice(0, 6)}`,
        kind: "http",
        environment: "test",
        steps: [{ request: { method: "POST", url: `/cut?pad=${100 - kept}`, body: "{{SECRET}}" }, expect: [{ json: "$.x", equals: 1 }] }],
      });
      const message = run.steps[0]?.message ?? "";
      expect(message).toContain(`got "${"x".repeat(100 - kept)}***`);
      expect(JSON.stringify(run)).not.toContain(SECRET.slice(0, kept));
    }
  });

  test("a large captured value compared in a check is recorded cut, not whole in every assertion", async () => {
    const big = "a".repeat(200_000);
    const run = await runToEnd(s, project, {
      name: `big expected ${crypto.randomUUID().slice(0, 6)}`,
      kind: "http",
      environment: "test",
      steps: [
        { request: { method: "POST", url: "/echo-string", body: big }, capture: { c: "$.data" } },
        ...Array.from({ length: 5 }, () => ({
          request: { method: "POST", url: "/echo-string", body: "b" },
          expect: [{ json: "$.data", not_equals: "{{c}}" }],
        })),
      ],
    });
    expect(run.status).toBe("passed");
    const recorded = run.steps[1]?.assertions?.[0] as { expected: string } | undefined;
    expect(recorded?.expected).toBe(`${"a".repeat(2048)}…`);
    expect(JSON.stringify(run).length).toBeLessThan(100_000);
  });

  test("cut in the middle of a JSON escape (s3cr\\u00…), the partial secret and escape are masked", async () => {
    const php = jsonForms(SECRET).php ?? "";
    const upTo = php.indexOf("\\u") + 4; // "s3cr&t\/\u00" of "s3cr&t\/\u00e9…"
    const run = await echoed(`/cut-json?pad=${EXCERPT - upTo}`);
    expect(run.steps[0]?.response?.body).toBe(`${"x".repeat(EXCERPT - upTo)}***`);
  });
});

describe("a secret holding a quote and a backslash", () => {
  const QUOTED = 'Pa\\ss"w0rd!2024';
  /** The secret as written, JSON-escaped once, twice and three times. */
  const escaped = [QUOTED, JSON.stringify(QUOTED).slice(1, -1), JSON.stringify(JSON.stringify(QUOTED)).slice(1, -1)];
  escaped.push(JSON.stringify(escaped[2]).slice(1, -1));
  let quoted: string;
  beforeAll(async () => {
    ({ project: quoted } = await projectWithEnv(s, "masking-quoted", { BASE_URL: `http://127.0.0.1:${echo.port}` }, { QUOTED }));
  });

  test("echoed back inside a JSON string (escaped twice) is masked in the response excerpt", async () => {
    const run = await runToEnd(s, quoted, {
      name: "echo quoted",
      kind: "http",
      environment: "test",
      steps: [{ request: { method: "POST", url: "/echo-string", json: { password: "{{QUOTED}}" } }, expect: [{ status: 200 }] }],
    });
    expect(run.status).toBe("passed");
    const text = JSON.stringify(run);
    for (const form of escaped) expect(text).not.toContain(form);
    expect(JSON.parse(run.steps[0]?.response?.body ?? "{}")).toEqual({ data: '{"password":"***"}' });
  });

  test("quoted by a failed check's message (the body JSON-escaped again) is masked there, in JUnit and in the log's words", async () => {
    const run = await runToEnd(s, quoted, {
      name: "fail quoted",
      kind: "http",
      environment: "test",
      steps: [{ request: { method: "POST", url: "/echo-string", json: { password: "{{QUOTED}}" } }, expect: [{ body: { contains: "zzz-nope" } }] }],
    });
    expect(run.status).toBe("failed");
    expect(run.steps[0]?.message).toContain("***");
    const text = JSON.stringify(run);
    for (const form of escaped) expect(text).not.toContain(form);
    const junit = await (await s.call("GET", `/projects/${quoted}/runs/${run.id}/junit`)).text();
    for (const form of escaped) expect(junit).not.toContain(form.replace(/"/g, "&quot;"));
    expect(junit).not.toContain("w0rd!2024");
  });
});
