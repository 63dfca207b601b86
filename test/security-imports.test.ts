// What a member hands in to be imported is read in bounded time: a Postman collection made to make its reader
// backtrack or build huge lists is read in one pass or refused with a 400 naming the list, and nothing is imported.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let member: string;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  member = (await s.userWithKey("member@acme.test", "acme", "member")).key;
  await json(await s.call("POST", "/projects", { name: "imports" }), 201);
});
afterAll(async () => {
  await s.stop();
});

const collection = (request: unknown, exec?: string[]) => ({
  info: { name: "Hostile", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
  item: [{ name: "one", request, ...(exec ? { event: [{ listen: "test", script: { exec } }] } : {}) }],
});

const importCollection = (c: unknown) => s.call("POST", "/projects/imports/imports/postman", { collection: c }, member);

const automationNames = async () =>
  (await json<{ data: { name: string }[] }>(await s.call("GET", "/projects/imports/automations?limit=200"))).data.map((a) => a.name).sort();

// Before, one regular expression read this line backtracking at every comma: half a megabyte held the API's thread
// for half a minute (a megabyte, the largest body, for two), and every other request waited. The test's timeout is
// the bound: read in one pass, it takes milliseconds.
test("a test-script line of a hundred thousand `, () => {` is read in one pass and imported with a warning", async () => {
  const line = `pm.test(${",()=>{".repeat(90_000)}}x`;
  const res = await importCollection(collection({ method: "GET", url: "http://shop.test/items" }, [line]));
  const body = await json<{ automations: { name: string }[]; warnings: { request: string; message: string }[] }>(res, 201);
  expect(body.automations.map((a) => a.name)).toEqual(["one"]);
  expect(body.warnings.some((w) => w.message.includes("has no counterpart and was left out"))).toBe(true);
}, 15_000);

test("Postman's one-line tests are still read into assertions", async () => {
  const res = await importCollection(
    collection({ method: "GET", url: "http://shop.test/one-line" }, [
      'pm.test("ok", function () { pm.response.to.have.status(200); pm.expect(pm.response.text()).to.include("pear"); });',
    ]),
  );
  const body = await json<{ automations: { steps: { expect: unknown[] }[] }[] }>(res, 201);
  expect(body.automations[0]?.steps[0]?.expect).toEqual([{ status: 200 }, { body: { contains: "pear" } }]);
});

test("lists and URLs its reader would take minutes to build are refused with a 400 naming them, and nothing is imported", async () => {
  const before = await automationNames();
  const cases: [unknown, string][] = [
    // Half a million empty headers (two bytes each).
    [
      collection({ method: "GET", url: "http://shop.test/", header: Array.from({ length: 300_000 }, () => 0) }),
      "collection.item[0].request.header has 300000 entries",
    ],
    // A URL whose query is a few hundred thousand empty parameters.
    [collection({ method: "GET", url: `http://shop.test/?${"&".repeat(300_000)}` }), "collection.item[0].request.url is 300018 characters long"],
    [
      collection({ method: "GET", url: { raw: "http://shop.test/", host: ["shop", "test"], query: "&".repeat(300_000) } }),
      "collection.item[0].request.url.query is",
    ],
    [collection({ method: "GET", url: "http://shop.test/", header: "a:\n".repeat(100_000) }), "collection.item[0].request.header is 300000 characters long"],
    [
      { ...collection({ method: "GET", url: "http://shop.test/" }), variable: Array.from({ length: 200_000 }, () => ({})) },
      "collection.variable has 200000 entries",
    ],
  ];
  for (const [c, said] of cases) {
    const err = await json<{ error: string; message: string; details: { path: string; message: string }[] }>(await importCollection(c), 400);
    expect(err.error).toBe("invalid_request");
    expect(err.message).toContain(said);
    expect(err.details[0]?.message).toContain(said);
  }
  expect(await automationNames()).toEqual(before);
}, 15_000);

const har = (entries: unknown[]) => ({ log: { pages: [{ title: "Recorded" }], entries } });
const importHar = (h: unknown) => s.call("POST", "/projects/imports/imports/har", { har: h, name: `recorded ${Math.random()}` }, member);

// Before, each reused value's variable name was found by trying every suffix from 2 (and the step's captures were
// copied at each one): thirty thousand values under one key took billions of steps. The test's timeout is the bound.
test("a HAR whose next request reuses thirty thousand values of one response is read in one pass, each value captured once", async () => {
  const values = Array.from({ length: 30_000 }, (_, i) => 100_000 + i);
  const res = await importHar(
    har([
      {
        request: { method: "GET", url: "http://shop.test/ids" },
        response: { status: 200, content: { mimeType: "application/json", text: JSON.stringify({ id: values }) } },
      },
      {
        request: { method: "POST", url: "http://shop.test/batch", postData: { mimeType: "application/json", text: JSON.stringify(values) } },
        response: { status: 200 },
      },
    ]),
  );
  const body = await json<{ automations: { steps: { capture?: Record<string, string>; request: { json?: unknown[] } }[] }[] }>(res, 201);
  const [first, second] = body.automations[0]?.steps ?? [];
  const captures = Object.entries(first?.capture ?? {});
  expect(captures.length).toBe(30_000);
  expect(captures[0]).toEqual(["id", "$.id[0]"]);
  expect(captures[1]).toEqual(["id_2", "$.id[1]"]);
  expect(captures.at(-1)).toEqual(["id_30000", "$.id[29999]"]);
  expect(second?.request.json?.slice(0, 2)).toEqual(["{{id}}", "{{id_2}}"]);
}, 15_000);

// A value under a key as long as the file: its JSON path (and the variable named after the key) would be copied for
// every value reused, gigabytes in all. A path longer than a capture takes is not captured.
test("values under a key longer than a capture's path are not captured, and the HAR is read", async () => {
  const values = Array.from({ length: 30_000 }, (_, i) => 100_000 + i);
  const key = "k".repeat(300_000);
  const res = await importHar(
    har([
      {
        request: { method: "GET", url: "http://shop.test/ids" },
        response: { status: 200, content: { mimeType: "application/json", text: JSON.stringify({ [key]: values }) } },
      },
      {
        request: { method: "POST", url: "http://shop.test/batch", postData: { mimeType: "application/json", text: JSON.stringify(values.slice(0, 100)) } },
        response: { status: 200 },
      },
    ]),
  );
  const body = await json<{ automations: { steps: { capture?: Record<string, string>; request: { json?: unknown[] } }[] }[] }>(res, 201);
  const [first, second] = body.automations[0]?.steps ?? [];
  expect(first?.capture).toBeUndefined();
  expect(second?.request.json?.slice(0, 2)).toEqual([100_000, 100_001]);
}, 15_000);
