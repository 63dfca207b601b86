// Importers: a HAR file becomes one automation whose steps replay its requests in order, capturing what later ones reuse.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

let s: TestServer;
let target: TargetApp;

beforeAll(async () => {
  s = await startTestServer();
  target = startTargetApp();
  expect((await s.call("POST", "/projects", { name: "har", slug: "har" })).status).toBe(201);
});
afterAll(async () => {
  await target.stop();
  await s.stop();
});

const entry = (method: string, url: string, headers: Record<string, string>, post: unknown, status: number, response: unknown) => ({
  startedDateTime: "2026-01-01T00:00:00.000Z",
  time: 5,
  request: {
    method,
    url,
    httpVersion: "HTTP/1.1",
    headers: Object.entries(headers).map(([name, value]) => ({ name, value })),
    queryString: [],
    cookies: [],
    headersSize: -1,
    bodySize: -1,
    ...(post === undefined ? {} : { postData: { mimeType: "application/json", text: JSON.stringify(post) } }),
  },
  response: {
    status,
    statusText: "",
    httpVersion: "HTTP/1.1",
    headers: [],
    cookies: [],
    content: { size: 0, mimeType: "application/json", text: JSON.stringify(response) },
    redirectURL: "",
    headersSize: -1,
    bodySize: -1,
  },
  cache: {},
  timings: { send: 0, wait: 5, receive: 0 },
});

/** As a browser saved it: the item created had id 555 and token "tok-555"; later requests reuse both. */
const har = (base: string) => ({
  log: {
    version: "1.2",
    creator: { name: "Browser", version: "1" },
    pages: [{ id: "p1", title: "Shop session", startedDateTime: "2026-01-01T00:00:00.000Z", pageTimings: {} }],
    entries: [
      entry("GET", `${base}/items`, { Accept: "application/json", ":authority": "x", Host: "x" }, undefined, 200, { total: 3 }),
      entry("POST", `${base}/items`, { "Content-Type": "application/json" }, { name: "har pear", token: "tok-555" }, 201, {
        id: 555,
        name: "har pear",
        token: "tok-555",
      }),
      entry("GET", `${base}/echo?item=555&q=short`, { Authorization: "Bearer tok-555" }, undefined, 200, {}),
      entry("PUT", `${base}/echo`, { "Content-Type": "application/json" }, { id: 555, note: "x" }, 200, {}),
      entry("GET", `${base}/flaky/555?fail=0`, {}, undefined, 200, {}),
      { request: { method: "GET", url: "data:text/plain,hi" }, response: { status: 200 } },
    ],
  },
});

test("a HAR file imports as one automation in request order, with captures where a later request reuses a response value; it runs and passes", async () => {
  const res = await s.call("POST", "/projects/har/imports/har", { har: har(target.url) });
  expect(res.status).toBe(201);
  const out = (await res.json()) as {
    automations: {
      id: string;
      name: string;
      source: string;
      steps: { name: string; request: Record<string, unknown>; capture?: unknown; expect: unknown[] }[];
    }[];
    warnings: { request: string; message: string }[];
  };
  expect(out.automations).toHaveLength(1);
  const a = out.automations[0] as (typeof out.automations)[number];
  expect(a).toMatchObject({ name: "Shop session", source: "imported" });
  expect(a.steps.map((st) => st.name)).toEqual(["1. GET /items", "2. POST /items", "3. GET /echo", "4. PUT /echo", "5. GET /flaky/555"]);
  expect(a.steps[0]?.request).toEqual({ method: "GET", url: `${target.url}/items`, headers: { Accept: "application/json" } });
  expect(a.steps[1]?.capture).toEqual({ id: "$.id", token: "$.token" });
  expect(a.steps[1]?.expect).toEqual([{ status: 201 }]);
  expect(a.steps[2]?.request).toEqual({
    method: "GET",
    url: `${target.url}/echo`,
    query: { item: "{{id}}", q: "short" },
    headers: { Authorization: "Bearer {{token}}" },
  });
  expect(a.steps[3]?.request).toMatchObject({ url: `${target.url}/echo`, json: { id: "{{id}}", note: "x" } });
  expect(a.steps[4]?.request).toMatchObject({ url: `${target.url}/flaky/{{id}}`, query: { fail: "0" } });
  expect(out.warnings).toEqual([{ request: "Shop session", message: "6. GET text/plain,hi: it has no http(s) URL and was left out" }]);

  const run = (await (await s.call("POST", `/projects/har/automations/${a.id}/run`, {})).json()) as { id: string };
  expect((await waitForRun(s, "har", run.id, 120_000)).status).toBe("passed");
  // The replay sent the id and token this run's response gave, not the recorded ones.
  const created = target.seen.filter((r) => r.method === "POST" && r.path === "/items");
  expect(created).toHaveLength(1);
  const echoed = target.seen.find((r) => r.path.startsWith("/echo?"));
  expect(echoed?.path).toBe("/echo?item=100&q=short");
  expect(echoed?.headers.authorization).toBe("Bearer tok-555");
  expect(JSON.parse(target.seen.find((r) => r.method === "PUT")?.body ?? "{}")).toEqual({ id: 100, note: "x" });
  expect(target.seen.some((r) => r.path === "/flaky/100?fail=0")).toBe(true);
}, 130_000);

test("a request whose path is longer than a step name allows still imports, its step name cut to 200 characters", async () => {
  const long = `/items/${"x".repeat(300)}`;
  const res = await s.call("POST", "/projects/har/imports/har", { har: { log: { entries: [entry("GET", `${target.url}${long}`, {}, undefined, 404, {})] } } });
  expect(res.status).toBe(201);
  const out = (await res.json()) as { automations: { steps: { name: string }[] }[] };
  expect(out.automations[0]?.steps[0]?.name).toBe(`1. GET ${long}`.slice(0, 200));
});

test("what is not a HAR file is a 400 naming har and creates nothing", async () => {
  const res = await s.call("POST", "/projects/har/imports/har", { har: { entries: [] } });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { details: { path: string }[] }).details[0]?.path).toBe("har");
});

test("a recorded redirect is checked as the redirect (not followed: its target is the next entry), and the replay passes", async () => {
  const session = {
    log: {
      version: "1.2",
      creator: { name: "Browser", version: "1" },
      entries: [
        entry("GET", `${target.url}/redirect-to?to=/items/1`, {}, undefined, 307, {}),
        entry("GET", `${target.url}/items/1`, {}, undefined, 200, { id: 1 }),
      ],
    },
  };
  const res = await s.call("POST", "/projects/har/imports/har", { har: session });
  expect(res.status).toBe(201);
  const [imported] = ((await res.json()) as { automations: { id: string; steps: { request: Record<string, unknown>; expect: unknown[] }[] }[] }).automations;
  expect(imported?.steps[0]).toMatchObject({ request: { follow_redirects: false }, expect: [{ status: 307 }] });
  expect(imported?.steps[1]?.request.follow_redirects).toBeUndefined();
  const run = await s.call("POST", `/projects/har/automations/${imported?.id}/run`, {});
  expect((await waitForRun(s, "har", ((await run.json()) as { id: string }).id)).status).toBe("passed");
});
