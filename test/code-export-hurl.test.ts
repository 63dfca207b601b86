// Exporters: an http automation as a Hurl file, checked against golden files written to Hurl 7's grammar.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const GOLDEN = join(import.meta.dir, "golden");
const golden = (name: string) => readFileSync(join(GOLDEN, name), "utf8");

beforeAll(async () => {
  s = await startTestServer();
  expect((await s.call("POST", "/projects", { name: "exp", slug: "exp" })).status).toBe(201);
  const env = await s.call("POST", "/projects/exp/environments", {
    name: "staging",
    variables: { BASE_URL: "https://staging.example.test/api", TEAM: "qa" },
    secrets: { TOKEN: "never-written" },
  });
  expect(env.status).toBe(201);
  const steps = [
    {
      name: "create an item",
      request: {
        method: "POST",
        url: "/items",
        headers: { Authorization: "Bearer {{TOKEN}}", "X-Team": "{{TEAM}}", "X-Note": "a # is not a comment" },
        json: { name: "pen", price: 4, tags: ["a"], team: "{{TEAM}}", owner: "{{OWNER_ID}}", note: "by {{TEAM}}" },
        follow_redirects: false,
      },
      expect: [
        { status: 201 },
        { header: "Content-Type", contains: "json" },
        { json: "$.id", exists: true },
        { json: "$.name", equals: "pen" },
        { json: "$.tags", type: "array" },
        { json: "$.tags.length", equals: 1 },
        { duration_ms: { lt: 2000 } },
      ],
      capture: { item_id: "$.id", where: "header:Location" },
    },
    {
      name: "read it back",
      request: { method: "GET", url: "/items/{{item_id}}", query: { expand: "all", team: "{{TEAM}}" }, timeout_ms: 5000 },
      expect: [
        { status: { gte: 200, lt: 300 } },
        { json: "$.id", equals: "{{item_id}}" },
        { body: { matches: "pen|pencil/s" } },
        { json: "$.tags", contains: "a" },
        { schema: { type: "object" } },
      ],
    },
    {
      name: "send a form",
      request: { method: "POST", url: "https://other.example.test/form", body: 'a=1&b="two"\nline 2', headers: { "Content-Type": "text/plain" } },
      expect: [{ status: 200 }, { header: "X-Missing", exists: false }],
    },
  ];
  expect((await s.call("POST", "/projects/exp/automations", { name: "items round trip", kind: "http", steps })).status).toBe(201);
});
afterAll(async () => {
  await s.stop();
});

test("an http automation exports as the golden Hurl file: {{BASE_URL}} and Hurl variables without an environment", async () => {
  const res = await s.call("GET", "/projects/exp/automations/items%20round%20trip/hurl");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/plain");
  expect(await res.text()).toBe(golden("items-round-trip.hurl"));
});

test("with --env the environment's variables are written in and relative URLs become absolute; secrets stay variables", async () => {
  const res = await s.call("GET", "/projects/exp/automations/items%20round%20trip/hurl?environment=staging");
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toBe(golden("items-round-trip.staging.hurl"));
  expect(text).not.toContain("never-written");
});

test("an unknown environment and a browser automation are 400s naming the field", async () => {
  const env = await s.call("GET", "/projects/exp/automations/items%20round%20trip/hurl?environment=nope");
  expect(env.status).toBe(400);
  expect(((await env.json()) as { details: { path: string }[] }).details[0]?.path).toBe("environment");
  const b = await s.call("POST", "/projects/exp/automations", {
    name: "a page",
    kind: "browser",
    steps: [{ goto: "https://example.test/" }],
  });
  expect(b.status).toBe(201);
  const res = await s.call("GET", "/projects/exp/automations/a%20page/hurl");
  expect(res.status).toBe(400);
  expect(((await res.json()) as { details: { path: string }[] }).details[0]?.path).toBe("automationId");
});

test("a URL from a captured value is made absolute as svc makes it; one from an outside variable says it must be absolute", async () => {
  const steps = [
    { request: { method: "POST", url: "/items", json: { name: "cup" } }, capture: { loc: "header:Location" } },
    { request: { method: "GET", url: "{{loc}}" } },
    { request: { method: "GET", url: "{{OTHER_URL}}/x" } },
  ];
  expect((await s.call("POST", "/projects/exp/automations", { name: "follow the location", kind: "http", steps })).status).toBe(201);
  const plain = await (await s.call("GET", "/projects/exp/automations/follow%20the%20location/hurl")).text();
  expect(plain).toContain('loc: header "Location"\nloc__url: header "Location" replaceRegex /^\\/*([^:\\/?#]*(?:[\\/?#]|$))/ "{{BASE_URL}}/$1"\n');
  expect(plain).toContain("\nGET {{loc__url}}\n");
  expect(plain).toContain(
    "# {{OTHER_URL}} must be an absolute URL for Hurl: svc would join a relative one to BASE_URL, Hurl refuses it\nGET {{OTHER_URL}}/x\n",
  );
  const staging = await (await s.call("GET", "/projects/exp/automations/follow%20the%20location/hurl?environment=staging")).text();
  expect(staging).toContain('replaceRegex /^\\/*([^:\\/?#]*(?:[\\/?#]|$))/ "https://staging.example.test/api/$1"\n');
});

test("query keys and header names are written as Hurl's key strings: spaces, ':', '=' and a leading '[' escaped", async () => {
  const steps = [{ request: { method: "GET", url: "/q", query: { "q s": "a&b=c", "x:y=": "1", "[0]": "#", "{{K}}": "v" }, headers: { "X-A b": "c#d" } } }];
  expect((await s.call("POST", "/projects/exp/automations", { name: "odd keys", kind: "http", steps })).status).toBe(201);
  const text = await (await s.call("GET", "/projects/exp/automations/odd%20keys/hurl")).text();
  expect(text).toContain("X-A\\u{20}b: c\\#d\n[Query]\nq\\u{25}20s: a&b=c\nx\\:y\\u{25}3D: 1\n\\u{5b}0]: \\#\n{{K}}: v\n");
});
