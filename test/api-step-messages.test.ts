// Thirteen common mistakes in steps, each answered 400 with a message that says what is wrong at the field it names
// (never a bare "Invalid input"): unknown actions and assertion subjects name the field probably meant, missing
// fields say so, wrong types say what was given. The CLI and MCP show the server's own message.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  expect((await s.call("POST", "/projects", { name: "Mistakes", slug: "mistakes" })).status).toBe(201);
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "mistakes" });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
});

const url = "https://shop.example.com/";
const MISTAKES: { what: string; kind: "http" | "browser"; steps: unknown[]; path: string; message: string }[] = [
  {
    what: "a browser step in an http automation",
    kind: "http",
    steps: [{ goto: url }],
    path: "body.steps.0",
    message: "an http automation takes only request steps",
  },
  { what: "a request without url", kind: "http", steps: [{ request: { method: "GET" } }], path: "body.steps.0.request.url", message: "required (string)" },
  {
    what: "a method that does not exist",
    kind: "http",
    steps: [{ request: { url, method: "FETCH" } }],
    path: "body.steps.0.request.method",
    message: "expected one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS",
  },
  {
    what: "an assertion without an operator",
    kind: "http",
    steps: [{ request: { url }, expect: [{ json: "$.id" }] }],
    path: "body.steps.0.expect.0",
    message: "needs at least one of equals, not_equals, contains, matches, exists, type, gt, gte, lt, lte",
  },
  {
    what: "a misspelt step field",
    kind: "http",
    steps: [{ request: { url }, expct: [{ status: 200 }] }],
    path: "body.steps.0",
    message: 'unknown field "expct" (did you mean "expect"?): expected one of name, request, expect, capture',
  },
  {
    what: "a status given as a string",
    kind: "http",
    steps: [{ request: { url }, expect: [{ status: "200" }] }],
    path: "body.steps.0.expect.0.status",
    message: "expected number or object, not string",
  },
  {
    what: "an unknown request field",
    kind: "http",
    steps: [{ request: { url, header: { accept: "x" } } }],
    path: "body.steps.0.request",
    message: 'unknown field "header" (did you mean "headers"?): expected one of method, url, headers, query, json, body, timeout_ms, follow_redirects',
  },
  {
    what: "a misspelt browser action",
    kind: "browser",
    steps: [{ clik: "text=Go" }],
    path: "body.steps.0",
    message:
      'unknown field "clik" (did you mean "click"?): expected one of request, goto, click, fill, press, select, check, uncheck, hover, wait_for, expect, screenshot',
  },
  { what: "fill without a locator", kind: "browser", steps: [{ fill: { value: "x" } }], path: "body.steps.0.fill.locator", message: "required (string)" },
  {
    what: "a timeout given as a string",
    kind: "http",
    steps: [{ request: { url, timeout_ms: "5000" } }],
    path: "body.steps.0.request.timeout_ms",
    message: "expected number, not string",
  },
  {
    what: "a capture name with a dash",
    kind: "http",
    steps: [{ request: { url }, capture: { "order-id": "$.id" } }],
    path: "body.steps.0.capture.order-id",
    message: 'invalid name "order-id": a capture\'s name is letters, digits and _, not starting with a digit',
  },
  { what: "a step that is a string", kind: "http", steps: [`GET ${url}`], path: "body.steps.0", message: "expected object, not string" },
  {
    what: "a misspelt assertion subject",
    kind: "http",
    steps: [{ request: { url }, expect: [{ statuz: 200 }] }],
    path: "body.steps.0.expect.0",
    message: 'unknown field "statuz" (did you mean "status"?): expected a string, or one of status, header, json, body, duration_ms, schema',
  },
];

test("each of 13 common mistakes is a 400 naming the field with a precise message, and nothing is created", async () => {
  expect(MISTAKES.length).toBe(13);
  for (const [i, m] of MISTAKES.entries()) {
    const res = await s.call("POST", "/projects/mistakes/automations", { name: `mistake ${i}`, kind: m.kind, steps: m.steps });
    expect({ what: m.what, status: res.status }).toEqual({ what: m.what, status: 400 });
    const body = (await res.json()) as { error: string; details: { path: string; message: string }[] };
    expect(body.error).toBe("invalid_request");
    expect({ what: m.what, details: body.details }).toEqual({ what: m.what, details: [{ path: m.path, message: m.message }] });
  }
  expect(((await (await s.call("GET", "/projects/mistakes/automations")).json()) as { data: unknown[] }).data).toEqual([]);
});

test("two mistakes in one http step are both named where they are, not read as a browser step", async () => {
  const steps = [{ request: { url }, expect: [{ status: "200" }], captur: { id: "$.id" } }];
  const res = await s.call("POST", "/projects/mistakes/automations", { name: "two mistakes", kind: "http", steps });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { details: unknown[] }).details).toEqual([
    { path: "body.steps.0.expect.0.status", message: "expected number or object, not string" },
    { path: "body.steps.0", message: 'unknown field "captur" (did you mean "capture"?): expected one of name, request, expect, capture' },
  ]);
});

test("the CLI and MCP give the server's message for a misspelt browser action", async () => {
  const m = MISTAKES[7] as (typeof MISTAKES)[number];
  const dir = tempDir("svc-steps-");
  const file = join(dir, "automation.json");
  writeFileSync(file, JSON.stringify({ name: "from the cli", kind: m.kind, steps: m.steps }));
  const out = await cli.run(["automations", "create", "--file", file]);
  expect(out.code).toBe(2);
  expect(out.stderr).toContain(m.message);

  const home = tempDir("svc-mcp-");
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dir, "..", "src", "main.ts"), "mcp", "--project", "mistakes"],
      env: { PATH: "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: `${home}/config`, SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stderr: "pipe",
    }),
  );
  try {
    const r = await client.callTool({ name: "create_automation", arguments: { name: "from mcp", kind: m.kind, steps: m.steps } });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.structuredContent)).toContain(m.message.replaceAll('"', '\\"'));
  } finally {
    await client.close();
  }
});
