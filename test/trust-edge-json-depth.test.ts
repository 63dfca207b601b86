// A JSON body nested deeper than validation can walk is a 400 naming the body, never a 500, and saves nothing;
// nesting up to the cap (64 levels) is accepted, and brackets inside strings do not count.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  expect((await s.call("POST", "/projects", { name: "Deep" })).status).toBe(201);
});
afterAll(() => s.stop());

const nestedObject = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
const nestedArray = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
/** An automation whose http step sends `json`: the body's own object, steps, step and request take 4 levels. */
/** An automation whose request body is `json`; each gets its own name (names are unique in a project). */
const automationWithJson = (json: string, name = "deep") =>
  `{"name":"${name}","kind":"http","steps":[{"request":{"method":"POST","url":"/x","json":${json}}}]}`;

async function automationCount(): Promise<number> {
  const r = await s.call("GET", "/projects/deep/automations");
  expect(r.status).toBe(200);
  return ((await r.json()) as { data: unknown[] }).data.length;
}

test.each([
  ["an automation's request json nested 10,000 objects deep", "/projects/deep/automations", automationWithJson(nestedObject(10_000))],
  ["an automation's request json nested 10,000 arrays deep", "/projects/deep/automations", automationWithJson(nestedArray(10_000))],
  ["a whole body that is 10,000 nested arrays", "/projects/deep/automations", nestedArray(10_000)],
  ["a project's OpenAPI document nested 10,000 deep", "/projects", `{"name":"deeper","openapi":${nestedObject(10_000)}}`],
  ["one level over the cap", "/projects/deep/automations", automationWithJson(nestedObject(61))],
])("%s is a 400 naming the body, and saves nothing", async (_name, path, body) => {
  const before = await automationCount();
  const r = await s.call("POST", path, body);
  expect(r.status).toBe(400);
  const error = await r.json();
  expect(error).toMatchObject({ error: "invalid_request", details: [{ path: "body" }] });
  expect(error.message).toContain("nested deeper than 64");
  expect(await automationCount()).toBe(before);
  expect((await s.call("GET", "/projects/deeper")).status).toBe(404);
});

test("nesting up to the cap is accepted, and brackets inside strings do not count", async () => {
  const atCap = await s.call("POST", "/projects/deep/automations", automationWithJson(nestedObject(60)));
  expect(atCap.status).toBe(201);
  const text = `"${"[{".repeat(5_000)}\\"${"[".repeat(100)}"`;
  const inString = await s.call("POST", "/projects/deep/automations", automationWithJson(`{"note":${text}}`, "brackets in a string"));
  expect(inString.status).toBe(201);
});
