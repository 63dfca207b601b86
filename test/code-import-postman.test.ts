// Importers: a Postman collection becomes automations (folders → groups, variables → an environment) that run and pass.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

let s: TestServer;
let target: TargetApp;

beforeAll(async () => {
  s = await startTestServer();
  target = startTargetApp();
  expect((await s.call("POST", "/projects", { name: "pm", slug: "pm" })).status).toBe(201);
});
afterAll(async () => {
  await target.stop();
  await s.stop();
});

/** A collection as Postman v2.1 exports it: a folder, collection auth, variables, tests written as Postman's snippets. */
const collection = (baseUrl: string) => ({
  info: { name: "Shop API", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
  auth: { type: "bearer", bearer: [{ key: "token", value: "{{token}}", type: "string" }] },
  variable: [
    { key: "baseUrl", value: baseUrl },
    { key: "token", value: "t0ken" },
    { key: "bad-name", value: "x" },
  ],
  item: [
    {
      name: "Items",
      item: [
        {
          name: "List items",
          event: [
            {
              listen: "test",
              script: {
                exec: [
                  'pm.test("Status code is 200", function () {',
                  "    pm.response.to.have.status(200);",
                  "});",
                  "var jsonData = pm.response.json();",
                  'pm.test("three items", function () {',
                  "    pm.expect(jsonData.total).to.eql(3);",
                  '    pm.expect(jsonData.items[0].name).to.eql("apple");',
                  "});",
                  'pm.response.to.have.header("X-Total");',
                  "pm.expect(pm.response.responseTime).to.be.below(60000);",
                  'pm.environment.set("first", jsonData.items[0].id);',
                ],
              },
            },
          ],
          request: {
            method: "GET",
            header: [
              { key: "Accept", value: "application/json" },
              { key: "X-Off", value: "1", disabled: true },
            ],
            url: "{{baseUrl}}/items",
          },
        },
        {
          name: "Create item",
          event: [{ listen: "test", script: { exec: ["pm.response.to.have.status(201);", 'pm.expect(pm.response.json().name).to.eql("pear");'] } }],
          request: {
            method: "POST",
            header: [],
            body: { mode: "raw", raw: '{"name": "pear", "price": 4}', options: { raw: { language: "json" } } },
            url: { raw: "{{baseUrl}}/items", host: ["{{baseUrl}}"], path: ["items"] },
          },
        },
      ],
    },
    {
      name: "Echo a form",
      request: {
        method: "POST",
        auth: {
          type: "basic",
          basic: [
            { key: "username", value: "ann" },
            { key: "password", value: "s3cret" },
          ],
        },
        body: {
          mode: "urlencoded",
          urlencoded: [
            { key: "a", value: "1" },
            { key: "b", value: "two words" },
          ],
        },
        url: "{{baseUrl}}/echo?q=1",
      },
    },
  ],
});

type Imported = {
  automations: { id: string; name: string; source: string; environment_id: string | null; steps: { request: Record<string, unknown>; expect: unknown[] }[] }[];
  environment: { id: string } | null;
  groups: { id: string; name: string }[];
  warnings: { request: string; message: string }[];
};

test("a Postman collection imports with its folder, variables, auth, bodies and tests, and every request runs and passes", async () => {
  const res = await s.call("POST", "/projects/pm/imports/postman", { collection: collection(target.url) });
  expect(res.status).toBe(201);
  const out = (await res.json()) as Imported;
  expect(out.automations.map((a) => a.name)).toEqual(["List items", "Create item", "Echo a form"]);
  for (const a of out.automations) expect(a).toMatchObject({ source: "imported", environment_id: out.environment?.id });
  const [list, create, echo] = out.automations;
  expect(list?.steps[0]?.request).toEqual({
    method: "GET",
    url: "{{baseUrl}}/items",
    headers: { Accept: "application/json", Authorization: "Bearer {{token}}" },
  });
  expect(list?.steps[0]?.expect).toEqual([
    { status: 200 },
    { json: "$.total", equals: 3 },
    { json: "$.items[0].name", equals: "apple" },
    { header: "X-Total", exists: true },
    { duration_ms: { lt: 60000 } },
  ]);
  expect(create?.steps[0]?.request).toMatchObject({ method: "POST", json: { name: "pear", price: 4 } });
  expect(echo?.steps[0]?.request).toMatchObject({
    body: "a=1&b=two+words",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: `Basic ${btoa("ann:s3cret")}` },
  });
  expect(out.warnings).toEqual([
    { request: "Shop API", message: 'the variable "bad-name" has no valid name (letters, digits and _) and was left out' },
    { request: "List items", message: 'the test script line `pm.environment.set("first", jsonData.items[0].id)` has no counterpart and was left out' },
  ]);

  const env = (await (await s.call("GET", `/projects/pm/environments/${out.environment?.id}`)).json()) as { name: string; variables: Record<string, string> };
  expect(env).toMatchObject({ name: "Shop API", variables: { baseUrl: target.url, token: "t0ken" } });
  const group = (await (await s.call("GET", `/projects/pm/groups/${out.groups[0]?.id}`)).json()) as { name: string; automation_ids: string[] };
  expect(group).toMatchObject({ name: "Items", automation_ids: [list?.id, create?.id] });

  for (const a of out.automations) {
    const run = (await (await s.call("POST", `/projects/pm/automations/${a.id}/run`, {})).json()) as { id: string };
    expect((await waitForRun(s, "pm", run.id, 120_000)).status).toBe("passed");
  }
  expect(target.seen.find((r) => r.path === "/items" && r.method === "GET")?.headers.authorization).toBe("Bearer t0ken");
  expect(target.seen.find((r) => r.path === "/echo?q=1")?.body).toBe("a=1&b=two+words");

  // The same collection again: names get a suffix, nothing is overwritten.
  const again = (await (await s.call("POST", "/projects/pm/imports/postman", { collection: collection(target.url) })).json()) as Imported;
  expect(again.automations.map((a) => a.name)).toEqual(["List items (2)", "Create item (2)", "Echo a form (2)"]);
  expect(again.groups.map((g) => g.name)).toEqual(["Items (2)"]);
}, 200_000);

test("names with tabs, line breaks or control characters import as one-line names, never refused or kept raw", async () => {
  const odd = {
    info: { name: "Odd\tnames\u001b[2J", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
    item: [
      {
        name: "Users\nv2",
        item: [{ name: "Get user\t(v2)\u0007", request: { method: "GET", url: `${target.url}/items/1` } }],
      },
    ],
  };
  const res = await s.call("POST", "/projects/pm/imports/postman", { collection: odd });
  expect(res.status).toBe(201);
  const out = (await res.json()) as Imported;
  expect(out.automations.map((a) => a.name)).toEqual(["Get user (v2)"]);
  expect(out.groups.map((g) => g.name)).toEqual(["Users v2"]);
});

test("what is not a collection is a 400 naming the collection and creates nothing", async () => {
  const res = await s.call("POST", "/projects/pm/imports/postman", { collection: { openapi: "3.0.0" } });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { details: { path: string }[] }).details[0]?.path).toBe("collection");
});

test("tests written on one line, as Postman's snippets write them, keep their checks; a status check left out adds no guess", async () => {
  const oneLine = {
    info: { name: "One-liners", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
    item: [
      {
        name: "Refused without a token",
        event: [{ listen: "test", script: { exec: ["pm.test('is 401', function() { pm.response.to.have.status(401); });"] } }],
        request: { method: "GET", url: `${target.url}/status?code=401` },
      },
      {
        name: "Two checks on one line",
        event: [
          { listen: "test", script: { exec: ['pm.test("ok", () => { pm.response.to.have.status(200); pm.expect(pm.response.json().id).to.eql(1); });'] } },
        ],
        request: { method: "GET", url: `${target.url}/items/1` },
      },
      {
        name: "Status checked another way",
        event: [{ listen: "test", script: { exec: ["pm.test('client error', function () { pm.response.to.be.clientError; });"] } }],
        request: { method: "GET", url: `${target.url}/status?code=404` },
      },
      { name: "Dynamic", request: { method: "GET", url: `${target.url}/echo?id={{$guid}}&at={{$timestamp}}` } },
    ],
  };
  const res = await s.call("POST", "/projects/pm/imports/postman", { collection: oneLine });
  expect(res.status).toBe(201);
  const out = (await res.json()) as Imported;
  expect(out.automations.map((a) => a.steps[0]?.expect)).toEqual([
    [{ status: 401 }],
    [{ status: 200 }, { json: "$.id", equals: 1 }],
    [],
    [{ status: { lt: 400 } }],
  ]);
  expect(out.warnings.filter((w) => w.request === "Dynamic").map((w) => w.message)).toEqual([
    "Postman's dynamic variables {{$guid}}, {{$timestamp}} have no counterpart in svc: put a value in the environment or the step instead",
  ]);
  expect(out.warnings.filter((w) => w.request === "Status checked another way").map((w) => w.message)).toEqual([
    "the test script line `pm.response.to.be.clientError` has no counterpart and was left out",
    "its test script checks the status in a way not imported: no status check was added; add the one it means",
  ]);
  // The first two run against the target and pass: the 401 is what the test expects.
  for (const a of out.automations.slice(0, 2)) {
    const run = await s.call("POST", `/projects/pm/automations/${a.id}/run`, {});
    expect((await waitForRun(s, "pm", ((await run.json()) as { id: string }).id)).status).toBe("passed");
  }
});

test("{{variables}} in a urlencoded body stay placeholders (the rest is encoded) and are filled in when the request runs", async () => {
  const form = {
    info: { name: "Form login", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
    variable: [
      { key: "user", value: "ann" },
      { key: "pass", value: "pw" },
    ],
    item: [
      {
        name: "Log in with a form",
        request: {
          method: "POST",
          url: `${target.url}/echo?form=1`,
          body: {
            mode: "urlencoded",
            urlencoded: [
              { key: "username", value: "{{user}}" },
              { key: "password", value: "x {{pass}}&" },
            ],
          },
        },
      },
    ],
  };
  const out = (await (await s.call("POST", "/projects/pm/imports/postman", { collection: form })).json()) as Imported;
  expect(out.automations[0]?.steps[0]?.request.body).toBe("username={{user}}&password=x+{{pass}}%26");
  const run = (await (await s.call("POST", `/projects/pm/automations/${out.automations[0]?.id}/run`, {})).json()) as { id: string };
  expect((await waitForRun(s, "pm", run.id)).status).toBe("passed");
  expect(target.seen.find((r) => r.path === "/echo?form=1")?.body).toBe("username=ann&password=x+pw%26");
});

test("a folder's variables go into the environment (a clash is a warning, never dropped silently)", async () => {
  const folders = {
    info: { name: "Folder variables", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
    variable: [{ key: "baseUrl", value: target.url }],
    item: [
      {
        name: "Users",
        variable: [
          { key: "userId", value: "1" },
          { key: "baseUrl", value: "https://elsewhere.example.test" },
        ],
        item: [{ name: "Read user", request: { method: "GET", url: "{{baseUrl}}/items/{{userId}}" } }],
      },
    ],
  };
  const out = (await (await s.call("POST", "/projects/pm/imports/postman", { collection: folders })).json()) as Imported;
  const env = (await (await s.call("GET", `/projects/pm/environments/${out.environment?.id}`)).json()) as { variables: Record<string, string> };
  expect(env.variables).toEqual({ baseUrl: target.url, userId: "1" });
  expect(out.warnings).toEqual([
    {
      request: "Users",
      message:
        'the variable "baseUrl" of the folder Users has another value than the one already in the environment, which is kept: give it another name or set it in the requests',
    },
  ]);
  const run = (await (await s.call("POST", `/projects/pm/automations/${out.automations[0]?.id}/run`, {})).json()) as { id: string };
  expect((await waitForRun(s, "pm", run.id)).status).toBe("passed");
});

test("the collection's and a folder's scripts are told once, saying what was done: their assertions are added to each request", async () => {
  const scripted = {
    info: { name: "Scripted", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" },
    event: [
      { listen: "prerequest", script: { exec: ['pm.environment.set("t", Date.now());'] } },
      { listen: "test", script: { exec: ["pm.expect(pm.response.responseTime).to.be.below(60000);", "console.log(1);"] } },
    ],
    item: [
      {
        name: "Checked",
        event: [{ listen: "test", script: { exec: ['pm.response.to.have.header("X-Total");'] } }],
        item: [
          { name: "One", request: { method: "GET", url: `${target.url}/items` } },
          {
            name: "Two",
            event: [{ listen: "prerequest", script: { exec: ["console.log(2);"] } }],
            request: { method: "GET", url: `${target.url}/items` },
          },
        ],
      },
    ],
  };
  const out = (await (await s.call("POST", "/projects/pm/imports/postman", { collection: scripted })).json()) as Imported;
  expect(out.automations.map((a) => a.steps[0]?.expect)).toEqual([
    [{ status: { lt: 400 } }, { duration_ms: { lt: 60000 } }, { header: "X-Total", exists: true }],
    [{ status: { lt: 400 } }, { duration_ms: { lt: 60000 } }, { header: "X-Total", exists: true }],
  ]);
  expect(out.warnings).toEqual([
    { request: "Scripted", message: "the pre-request script of the collection is not imported and was left out" },
    { request: "Scripted", message: "the test script line `console.log(1)` has no counterpart and was left out" },
    { request: "Scripted", message: "the test script of the collection runs after each of its requests in Postman: its 1 assertion was added to each of them" },
    {
      request: "Checked",
      message: "the test script of the folder Checked runs after each of its requests in Postman: its 1 assertion was added to each of them",
    },
    { request: "Two", message: "the pre-request script is not imported and was left out" },
  ]);
});
