// Importers: an OpenAPI 3.x document and a Swagger 2.0 one become the openapi generator's tests, which run and pass.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { sourceCli } from "./helpers/cli-source";
import { waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

let s: TestServer;
let target: TargetApp;

beforeAll(async () => {
  s = await startTestServer();
  target = startTargetApp();
  expect((await s.call("POST", "/projects", { name: "oas", slug: "oas" })).status).toBe(201);
});
afterAll(async () => {
  await target.stop();
  await s.stop();
});

const Item = { type: "object", required: ["id", "name"], properties: { id: { type: "integer" }, name: { type: "string" }, price: { type: "number" } } };
const NewItem = { type: "object", properties: { name: { type: "string", example: "pen" } } };

/** The target app's items API as OpenAPI 3.0. */
const openapi3 = (server: string) => ({
  openapi: "3.0.3",
  info: { title: "Items API", version: "1" },
  servers: [{ url: server }],
  paths: {
    "/items": {
      get: {
        operationId: "listItems",
        tags: ["items"],
        responses: {
          "200": {
            description: "the items",
            content: {
              "application/json": {
                schema: { type: "object", required: ["items", "total"], properties: { items: { type: "array", items: Item }, total: { type: "integer" } } },
              },
            },
          },
        },
      },
      post: {
        operationId: "createItem",
        tags: ["items"],
        requestBody: { required: true, content: { "application/json": { schema: NewItem } } },
        responses: {
          "201": { description: "created", content: { "application/json": { schema: { type: "object", properties: { name: { type: "string" } } } } } },
        },
      },
    },
    "/items/{id}": {
      get: {
        operationId: "getItem",
        tags: ["items"],
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" }, example: 1 }],
        responses: { "200": { description: "one item", content: { "application/json": { schema: Item } } }, "404": { description: "no such item" } },
      },
    },
  },
});

/** The same API as Swagger 2.0. */
const swagger2 = (host: string) => ({
  swagger: "2.0",
  info: { title: "Items API v2", version: "1" },
  host,
  basePath: "/",
  schemes: ["http"],
  produces: ["application/json"],
  paths: {
    "/items": {
      get: {
        operationId: "listItems",
        tags: ["legacy"],
        responses: { "200": { description: "the items", schema: { type: "object", properties: { total: { type: "integer" } } } } },
      },
      post: {
        operationId: "createItem",
        tags: ["legacy"],
        consumes: ["application/json"],
        parameters: [{ in: "body", name: "body", required: true, schema: NewItem }],
        responses: { "201": { description: "created", schema: { type: "object", properties: { name: { type: "string" } } } } },
      },
    },
    "/items/{id}": {
      get: {
        operationId: "getItem",
        tags: ["legacy"],
        parameters: [{ name: "id", in: "path", required: true, type: "integer", "x-example": 1 }],
        responses: { "200": { description: "one item", schema: Item }, "404": { description: "no such item" } },
      },
    },
  },
});

type Imported = {
  automations: { id: string; name: string; source: string; environment_id: string | null; tags: string[] }[];
  environment: { id: string } | null;
  groups: { id: string; name: string }[];
  warnings: { request: string; message: string }[];
};

async function runAll(out: Imported) {
  for (const a of out.automations) {
    const run = (await (await s.call("POST", `/projects/oas/automations/${a.id}/run`, {})).json()) as { id: string };
    const done = await waitForRun(s, "oas", run.id, 120_000);
    expect({ name: a.name, status: done.status, steps: done.steps.map((st) => st.message) }).toMatchObject({ name: a.name, status: "passed" });
  }
}

test("an OpenAPI 3 document imports as the generator's tests with its server as BASE_URL and its tags as groups; they run and pass", async () => {
  const res = await s.call("POST", "/projects/oas/imports/openapi", { document: openapi3(target.url) });
  expect(res.status).toBe(201);
  const out = (await res.json()) as Imported;
  expect(out.automations.map((a) => a.name).sort()).toEqual([
    "createItem: POST /items answers 201",
    "getItem: GET /items/{id} answers 200",
    "getItem: GET /items/{id} with an unknown id answers 404",
    "listItems: GET /items answers 200",
  ]);
  for (const a of out.automations) expect(a).toMatchObject({ source: "imported", environment_id: out.environment?.id, tags: ["openapi", "items"] });
  const env = (await (await s.call("GET", `/projects/oas/environments/${out.environment?.id}`)).json()) as { name: string; variables: Record<string, string> };
  expect(env).toMatchObject({ name: "Items API", variables: { BASE_URL: target.url } });
  expect(out.groups.map((g) => g.name)).toEqual(["items"]);
  await runAll(out);
}, 200_000);

test("BASE_URL is the first absolute server URL, its variables given their defaults; a relative one is passed over", async () => {
  const { port } = new URL(target.url);
  const document = {
    ...openapi3(target.url),
    info: { title: "Server variables", version: "1" },
    servers: [
      { url: "/relative" },
      {
        url: "{scheme}://127.0.0.1:{port}{base}",
        variables: { scheme: { default: "http", enum: ["http", "https"] }, port: { default: port }, base: { default: "" } },
      },
      { url: "https://later.example.test" },
    ],
  };
  // A project of its own: the names the other tests import stay unsuffixed.
  expect((await s.call("POST", "/projects", { name: "oas servers", slug: "oas-servers" })).status).toBe(201);
  const res = await s.call("POST", "/projects/oas-servers/imports/openapi", { document });
  expect(res.status).toBe(201);
  const out = (await res.json()) as Imported;
  const env = (await (await s.call("GET", `/projects/oas-servers/environments/${out.environment?.id}`)).json()) as { variables: Record<string, string> };
  expect(env.variables).toEqual({ BASE_URL: `http://127.0.0.1:${port}` });
  const list = out.automations.find((a) => a.name.startsWith("listItems"));
  const run = (await (await s.call("POST", `/projects/oas-servers/automations/${list?.id}/run`, {})).json()) as { id: string };
  expect((await waitForRun(s, "oas-servers", run.id, 120_000)).status).toBe("passed");
}, 200_000);

test("a Swagger 2.0 document is converted and imported; its tests run and pass", async () => {
  const res = await s.call("POST", "/projects/oas/imports/openapi", { document: swagger2(new URL(target.url).host) });
  expect(res.status).toBe(201);
  const out = (await res.json()) as Imported;
  expect(out.automations).toHaveLength(4);
  const env = (await (await s.call("GET", `/projects/oas/environments/${out.environment?.id}`)).json()) as { name: string; variables: Record<string, string> };
  expect(env).toMatchObject({ name: "Items API v2", variables: { BASE_URL: target.url } });
  // Names taken by the first import get a suffix.
  expect(out.automations.map((a) => a.name)).toContain("listItems: GET /items answers 200 (2)");
  await runAll(out);
}, 200_000);

test("a document that is not OpenAPI is a 400 naming the document and creates nothing", async () => {
  const before = ((await (await s.call("GET", "/projects/oas/automations?limit=200")).json()) as { data: unknown[] }).data.length;
  for (const document of [{ openapi: "2.5", info: {} }, { swagger: "1.2" }, { openapi: "3.0.0", info: { title: "x" }, paths: "nope" }]) {
    const res = await s.call("POST", "/projects/oas/imports/openapi", { document });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { details: { path: string }[] }).details[0]?.path).toStartWith("document");
  }
  expect(((await (await s.call("GET", "/projects/oas/automations?limit=200")).json()) as { data: unknown[] }).data.length).toBe(before);
});

test("svc import openapi FILE reads a YAML file named as its argument, and svc import postman a JSON one", async () => {
  const cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "oas" });
  try {
    const file = join(cli.cwd, "api.yaml");
    writeFileSync(file, stringify(openapi3(target.url)));
    const r = await cli.run(["import", "openapi", "api.yaml", "--name", "From the CLI", "--json"]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as Imported).automations).toHaveLength(4);
    const collection = { info: { name: "cli collection" }, item: [{ name: "cli item", request: { method: "GET", url: `${target.url}/items` } }] };
    writeFileSync(join(cli.cwd, "c.postman_collection.json"), JSON.stringify(collection));
    const p = await cli.run(["import", "postman", "c.postman_collection.json", "--json"]);
    expect(p.code).toBe(0);
    expect((JSON.parse(p.stdout) as Imported).automations.map((a) => a.name)).toEqual(["cli item"]);
    const missing = await cli.run(["import", "har", "nowhere.har"]);
    expect(missing.code).not.toBe(0);
  } finally {
    cli.remove();
  }
}, 60_000);
