// Exported Hurl files run under the real Hurl 7 (scripts/hurl.sh fetches it from Debian sid) against the local
// target app: what passes in svc passes in Hurl, and a failing check fails there too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startRun, waitForRun } from "./helpers/runs";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

const HURL = join(import.meta.dir, "..", "scripts", "hurl.sh");
const TOKEN = "tok-123-secret";
let s: TestServer;
let app: TargetApp;
const dir = tempDir("svc-hurl-");

const automations: Record<string, unknown[]> = {
  "list and read": [
    {
      name: "list",
      request: { method: "GET", url: "/items" },
      expect: [
        "[STATUS] == 200",
        { header: "Content-Type", contains: "json" },
        { header: "X-Total", equals: "3" },
        { header: "x-total", gte: 3, lt: 4 },
        { json: "$.total", equals: 3 },
        { json: "$.items.length", equals: 3 },
        { json: "items[0].name", equals: "apple" },
        { json: "$.items[0].tags", equals: ["fruit", "red"] },
        { json: "$.items[1]", equals: { id: 2, name: "bread", price: 5, tags: ["bakery"] } },
        { json: "$.items[*].name", contains: "bread" },
        { json: "$.items[*].id", equals: [1, 2, 3] },
        { json: "$.items[0].tags", contains: "red" },
        { json: "$.items[-1].name", equals: "cheese" },
        { json: "$.items[0].price", gt: 2, lte: 3 },
        { json: "$.items", type: "array" },
        { json: "$.items[0]", type: "object" },
        { json: "$.items[0].name", type: "string", not_equals: "bread", matches: "^app" },
        { json: "$.missing", exists: false },
        { body: { matches: "apple.*bread" } },
        { body: { contains: "cheese" } },
        { duration_ms: { lt: 60000 } },
        { schema: { type: "object" } },
      ],
      capture: { first_id: "$.items[0].id", total: { header: "X-Total" }, count: "$.total" },
    },
    {
      name: "read the first",
      request: { method: "GET", url: "/items/{{first_id}}" },
      expect: [{ status: 200 }, { json: "$.id", equals: "{{first_id}}" }, { json: "$.name", equals: "apple" }],
    },
    {
      name: "a header against captured values: the number as text",
      request: { method: "GET", url: "/items" },
      expect: [
        { header: "X-Total", equals: "{{count}}" },
        { header: "X-Total", equals: "{{total}}" },
        { json: "$.total", equals: "{{count}}" },
      ],
    },
  ],
  "create with a secret": [
    {
      name: "create",
      request: { method: "POST", url: "/items", json: { name: "pen", price: 4, tags: ["office"] }, follow_redirects: false },
      expect: [{ status: 201 }, { header: "Location", matches: "^/items/\\d+$" }, { json: "$.name", equals: "pen" }],
      capture: { new_id: "$.id", where: "header:Location" },
    },
    {
      name: "echo with the token",
      request: {
        method: "POST",
        url: "/echo",
        headers: { Authorization: "Bearer {{TOKEN}}", "X-Where": "{{where}}" },
        query: { id: "n{{new_id}}", q: "a b#c" },
        body: 'a=1&b="two"\nline 2',
        timeout_ms: 30000,
      },
      expect: [
        { status: { gte: 200, lt: 300 } },
        { json: "$.headers.authorization", equals: "Bearer {{TOKEN}}" },
        { json: "$.headers['x-where']", equals: "{{where}}" },
        { json: "$.query.id", equals: "n{{new_id}}" },
        { json: "$.query.q", equals: "a b#c" },
        { json: "$.body", equals: 'a=1&b="two"\nline 2' },
        { json: "$.method", equals: "POST" },
      ],
    },
    {
      name: "the new item is not stored",
      request: { method: "GET", url: "/items/{{new_id}}" },
      expect: [{ status: 404 }, '[BODY].error == "not found"'],
    },
  ],
  "text bodies": [
    {
      request: { method: "POST", url: "/echo", body: "two lines\nand a newline at the end\n" },
      expect: [{ json: "$.body", equals: "two lines\nand a newline at the end\n" }],
    },
    {
      request: { method: "PUT", url: "/echo", body: "a ``` fence, a `quote` and a \\ # not a comment" },
      expect: [
        { json: "$.body", equals: "a ``` fence, a `quote` and a \\ # not a comment" },
        { json: "$.method", equals: "PUT" },
      ],
    },
  ],
  // svc joins a relative URL that comes from a variable to BASE_URL when the step runs; Hurl refuses a relative one.
  "a URL from a captured Location": [
    {
      request: { method: "POST", url: "/items", json: { name: "cup", price: 2, tags: [] }, follow_redirects: false },
      expect: [{ status: 201 }, { header: "Location", matches: "^/items/\\d+$" }],
      capture: { loc: "header:Location" },
    },
    {
      request: { method: "GET", url: "{{loc}}" },
      expect: [{ status: 404 }, { json: "$.error", equals: "not found" }],
    },
  ],
  "query keys Hurl would misread unescaped": [
    {
      request: { method: "GET", url: "/echo", query: { "q s": "a&b=c", "x:y=": "1", "[0]": "#", "a+b": "1+1 " } },
      expect: [
        { json: "$.query['q s']", equals: "a&b=c" },
        { json: "$.query['x:y=']", equals: "1" },
        { json: "$.query['[0]']", equals: "#" },
        { json: "$.query['a+b']", equals: "1+1 " },
      ],
    },
  ],
  redirects: [
    {
      request: { method: "GET", url: "/redirect-to", query: { to: "/health" } },
      expect: [{ status: 200 }, { json: "$.ok", equals: true }],
    },
    {
      request: { method: "GET", url: "/redirect-to", query: { to: "/health" }, follow_redirects: false },
      expect: [{ status: 307 }, { header: "Location", equals: "/health" }, { body: { equals: "" } }],
    },
  ],
};

beforeAll(async () => {
  app = startTargetApp();
  s = await startTestServer();
  expect((await s.call("POST", "/projects", { name: "hurl", slug: "hurl" })).status).toBe(201);
  const env = await s.call("POST", "/projects/hurl/environments", { name: "local", variables: { BASE_URL: app.url }, secrets: { TOKEN } });
  expect(env.status, await env.clone().text()).toBe(201);
  for (const [name, steps] of Object.entries(automations)) {
    const res = await s.call("POST", "/projects/hurl/automations", { name, kind: "http", steps, environment: "local" });
    expect(res.status).toBe(201);
  }
  const failing = [{ request: { method: "GET", url: "/items" }, expect: [{ status: 200 }, { json: "$.total", equals: 4 }] }];
  expect((await s.call("POST", "/projects/hurl/automations", { name: "wrong total", kind: "http", steps: failing, environment: "local" })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await s.stop();
  await app.stop();
});

async function exported(name: string, environment?: string): Promise<string> {
  const q = environment ? `?environment=${environment}` : "";
  const res = await s.call("GET", `/projects/hurl/automations/${encodeURIComponent(name)}/hurl${q}`);
  expect(res.status).toBe(200);
  const file = join(dir, `${name.replace(/\W+/g, "-")}${environment ? `.${environment}` : ""}.hurl`);
  writeFileSync(file, await res.text());
  return file;
}

/**
 * Runs `hurl --test` on the files (as a process of its own: the target app answers from this one, so never a
 * blocking spawn); fails the test (never skips) when Hurl cannot be fetched or started.
 */
async function hurl(files: string[], variables: Record<string, string>) {
  const vars = Object.entries(variables).flatMap(([k, v]) => ["--variable", `${k}=${v}`]);
  const p = Bun.spawn(["bash", HURL, "--test", "--no-color", ...vars, ...files], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out: `${out}${err}` };
}

test("scripts/hurl.sh gives Hurl 7", () => {
  // The first call may fetch it from Debian (a few seconds).
  const r = Bun.spawnSync(["bash", HURL, "--version"], { stdout: "pipe", stderr: "pipe" });
  expect(`${r.stdout.toString()}${r.stderr.toString()}`).toMatch(/^hurl 7\./m);
  expect(r.exitCode).toBe(0);
}, 120_000);

test("the automations pass in svc itself (what Hurl is checked against)", async () => {
  for (const name of Object.keys(automations)) {
    const run = await waitForRun(s, "hurl", await startRun(s, "hurl", encodeURIComponent(name)));
    expect({ name, status: run.status }).toEqual({ name, status: "passed" });
  }
}, 120_000);

test("exported http automations pass under Hurl 7: BASE_URL and the secret given as --variable", async () => {
  for (const name of Object.keys(automations)) {
    const file = await exported(name);
    const r = await hurl([file], { BASE_URL: app.url, TOKEN });
    expect({ name, code: r.code, out: r.out }).toEqual({ name, code: 0, out: expect.stringContaining("Success") });
  }
  // The secret went out as the header Hurl was given, and never into a file.
  expect(app.seen.some((x) => x.path.startsWith("/echo") && x.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
}, 120_000);

test("exported with --env, only the secret is a variable, and the files still pass", async () => {
  const files = await Promise.all(Object.keys(automations).map((name) => exported(name, "local")));
  for (const file of files) expect(await Bun.file(file).text()).not.toContain(TOKEN);
  const r = await hurl(files, { TOKEN });
  expect({ code: r.code, out: r.out }).toEqual({ code: 0, out: expect.stringContaining("Succeeded files:   6 (100.0%)") });
}, 120_000);

test("an export whose check fails in svc fails under Hurl", async () => {
  const r = await hurl([await exported("wrong total", "local")], {});
  expect(r.code).not.toBe(0);
  expect(r.out).toContain("Assert failure");
  expect(r.out).toContain('jsonpath "$.total" == 4');
  expect((await waitForRun(s, "hurl", await startRun(s, "hurl", "wrong%20total"))).status).toBe("failed");
}, 120_000);

test("the golden files are Hurl 7 as Hurl reads it: no parsing error, and the first entry of the plain one passes", async () => {
  const golden = (name: string) => join(import.meta.dir, "golden", name);
  const vars = { BASE_URL: app.url, TOKEN, TEAM: "qa", OWNER_ID: "7" };
  const plain = await hurl(["--to-entry", "1", golden("items-round-trip.hurl")], vars);
  expect({ code: plain.code, out: plain.out }).toEqual({ code: 0, out: expect.stringContaining("Success") });
  // The staging one goes to a host that does not exist: a runtime error (3), never a parsing error (2).
  const staging = await hurl(["--to-entry", "1", golden("items-round-trip.staging.hurl")], vars);
  expect(staging.code).toBe(3);
  expect(staging.out).not.toContain("Parsing");
}, 120_000);
