// OpenAPI generation through the real server: documents validated on upload by a real parser, then positive,
// negative and chained http automations for the operations a feature covers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { targetOpenApi } from "./helpers/gen-target-app";
import { automationsOf, createFeature, createProject, generate, json } from "./helpers/gen-flow";
import { startTestServer, type TestServer } from "./helpers/server";

let t: TestServer;
let project: string;

beforeAll(async () => {
  t = await startTestServer();
  project = await createProject(t, "shop-api", { openapi: targetOpenApi() });
});
afterAll(async () => {
  await t.stop();
});

describe("OpenAPI documents on upload", () => {
  test.each([
    ["a missing required field", { openapi: "3.0.3", info: { title: "x" }, paths: {} }, "#/info must have required property 'version'"],
    [
      "a dangling $ref",
      {
        openapi: "3.1.0",
        info: { title: "x", version: "1" },
        paths: {
          "/a": { get: { responses: { "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/Nope" } } } } } } },
        },
      },
      'Missing $ref pointer "#/components/schemas/Nope"',
    ],
    ["Swagger 2.0", { swagger: "2.0", info: { title: "x", version: "1" }, paths: {} }, "OpenAPI 3.x"],
  ])("%s → 400 with the parser's message, and nothing changes", async (_name, doc, message) => {
    const res = await t.call("PATCH", `/projects/${project}`, { openapi: doc });
    const body = await json<{ error: string; message: string }>(res, 400);
    expect(body.error).toBe("invalid_request");
    expect(body.message).toContain(message);
    const p = await json<{ openapi: { info: { title: string } } }>(await t.call("GET", `/projects/${project}`), 200);
    expect(p.openapi.info.title).toBe("Acme Shop API");
  });
});

describe("openapi generation", () => {
  test("the items operations → positive, missing-field, unknown-id and create-then-read tests", async () => {
    const feature = await createFeature(t, project, { name: "Items", target: { kind: "api", tags: ["items"] } });
    const g = await generate(t, project, feature);
    expect(g.status).toBe("succeeded");
    // The one warning says the unknown-id test needs real data: a static mock answers any valid id.
    expect(g.warnings.map((w) => w.message)).toEqual([
      expect.stringContaining('"getItem: GET /items/{id} with an unknown id answers 404" cannot pass against a static mock. It expects 404 for id 987654321'),
    ]);
    const autos = await automationsOf(t, project, g);
    const byName = new Map(autos.map((a) => [a.name, a]));
    expect([...byName.keys()].sort()).toEqual([
      "createItem then getItem: what is created can be read",
      "createItem: POST /items answers 201",
      "createItem: POST /items rejects a body missing a required field",
      "getItem: GET /items/{id} answers 200",
      "getItem: GET /items/{id} with an unknown id answers 404",
      "listItems: GET /items answers 200",
    ]);
    for (const a of autos) expect(a).toMatchObject({ kind: "http", status: "draft", source: "generated", feature_id: feature });
    const create = byName.get("createItem: POST /items answers 201");
    expect(create?.steps[0]).toMatchObject({
      request: { method: "POST", url: "/items", json: { name: "Gadget", price: 3 } },
      expect: [{ status: 201 }, { schema: { type: "object", required: ["id", "name", "price"] } }],
    });
    const missing = byName.get("createItem: POST /items rejects a body missing a required field");
    expect(missing?.steps.map((s) => (s.request as { json: unknown }).json)).toEqual([{ price: 3 }, { name: "Gadget" }]);
    expect(missing?.steps[0]?.expect).toEqual([{ status: { gte: 400, lt: 500 } }]);
    expect(byName.get("getItem: GET /items/{id} answers 200")?.steps[0]).toMatchObject({ request: { url: "/items/1" } });
    expect(byName.get("getItem: GET /items/{id} with an unknown id answers 404")?.steps[0]).toMatchObject({
      request: { url: "/items/987654321" },
      expect: [{ status: 404 }],
    });
    const chain = byName.get("createItem then getItem: what is created can be read");
    expect(chain?.steps[0]).toMatchObject({ capture: { created_id: "$.id" } });
    expect(chain?.steps[1]).toMatchObject({ request: { url: "/items/{{created_id}}" } });
    // The id read back is compared with the one captured at creation.
    expect(chain?.steps[1]?.expect).toContainEqual({ json: "$.id", equals: "{{created_id}}" });
    // The list response is an array of $ref'd items: dereferenced into plain JSON Schema.
    expect(byName.get("listItems: GET /items answers 200")?.steps[0]?.expect).toEqual([
      { status: 200 },
      {
        schema: {
          type: "array",
          items: {
            type: "object",
            required: ["id", "name", "price"],
            properties: { id: { type: "integer" }, name: { type: "string" }, price: { type: "number" } },
          },
        },
      },
    ]);
  });

  test("a secured operation (by path prefix) → a positive test with credentials from the environment and a 401 test", async () => {
    const feature = await createFeature(t, project, { name: "Profile", target: { kind: "api", paths: ["/profile"] } });
    const g = await generate(t, project, feature, "openapi");
    const autos = await automationsOf(t, project, g);
    expect(autos.map((a) => a.name)).toEqual(["getProfile: GET /profile answers 200", "getProfile: GET /profile without credentials answers 401"]);
    expect(autos[0]?.steps[0]).toMatchObject({ request: { headers: { authorization: "Bearer {{API_TOKEN}}" } } });
    expect(autos[0]?.description).toContain("API_TOKEN");
    expect((autos[1]?.steps[0]?.request as { headers: Record<string, string> }).headers.authorization).toBeUndefined();
  });

  test("no matching operation is a warning; the openapi strategy without a document or an api target fails clearly", async () => {
    const none = await createFeature(t, project, { name: "Nothing", target: { kind: "api", tags: ["orders"] } });
    const g = await generate(t, project, none, "openapi");
    expect(g.status).toBe("succeeded");
    expect(g.warnings[0]?.message).toContain("No operation of the OpenAPI document matches");
    const web = await createFeature(t, project, { name: "Web", target: { kind: "web", url: "http://127.0.0.1:9/" } });
    const g2 = await generate(t, project, web, "openapi");
    expect(g2.status).toBe("failed");
    expect(g2.error).toContain("the openapi strategy cannot run: the feature names no API operations");
    const bare = await createProject(t, "no-doc");
    const f3 = await createFeature(t, bare, { name: "Items", target: { kind: "api", tags: ["items"] } });
    const g3 = await generate(t, bare, f3, "openapi");
    expect(g3.status).toBe("failed");
    expect(g3.error).toBe("the openapi strategy cannot run: the project has no OpenAPI document (set one with update_project)");
  });
});

describe("openapi generation from a 3.0 document written as real APIs write them", () => {
  // A 3.0 exclusive bound (`minimum` + `exclusiveMinimum: true`), a record composed with allOf, and a body example
  // whose `sku` follows a pattern the generator cannot synthesize.
  const NewOrder = {
    type: "object",
    required: ["sku", "quantity"],
    properties: { sku: { type: "string", pattern: "^[A-Z]{3}-[0-9]{4}$" }, quantity: { type: "integer", minimum: 0, exclusiveMinimum: true } },
  };
  const doc = {
    openapi: "3.0.3",
    info: { title: "Orders", version: "1" },
    components: {
      schemas: {
        NewOrder,
        Order: {
          allOf: [{ $ref: "#/components/schemas/NewOrder" }, { type: "object", required: ["id"], properties: { id: { type: "integer", readOnly: true } } }],
        },
      },
    },
    paths: {
      "/orders": {
        post: {
          operationId: "placeOrder",
          requestBody: {
            required: true,
            content: { "application/json": { schema: { $ref: "#/components/schemas/NewOrder" }, example: { sku: "ABC-1234", quantity: 2 } } },
          },
          responses: { "201": { description: "placed", content: { "application/json": { schema: { $ref: "#/components/schemas/Order" } } } } },
        },
      },
      "/orders/{id}": {
        get: {
          operationId: "getOrder",
          parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
          responses: { "200": { description: "the order", content: { "application/json": { schema: { $ref: "#/components/schemas/Order" } } } } },
        },
      },
    },
  };

  test("exclusive bounds, allOf records and body examples → every test, checking the right things", async () => {
    const orders = await createProject(t, "orders-30", { openapi: doc });
    const feature = await createFeature(t, orders, { name: "Orders", target: { kind: "api", paths: ["/orders"] } });
    const g = await generate(t, orders, feature, "openapi");
    expect(g.status).toBe("succeeded");
    // Never "not a valid automation": the 3.0 boolean bound is JSON Schema's number bound in the check.
    expect(g.warnings.map((w) => w.message).filter((m) => m.includes("not a valid automation"))).toEqual([]);
    const byName = new Map((await automationsOf(t, orders, g)).map((a) => [a.name, a]));
    expect([...byName.keys()].sort()).toEqual([
      "getOrder: GET /orders/{id} answers 200",
      "placeOrder then getOrder: what is created can be read",
      "placeOrder: POST /orders answers 201",
      "placeOrder: POST /orders rejects a body missing a required field",
    ]);
    const quantity = { type: "integer", exclusiveMinimum: 0 };
    expect(byName.get("placeOrder: POST /orders answers 201")?.steps[0]?.expect).toContainEqual({
      schema: { allOf: [expect.objectContaining({ properties: { sku: expect.anything(), quantity } }), expect.anything()] },
    });
    // Each required field is left out of the documented example, so only the missing field can be why it is refused.
    const missing = byName.get("placeOrder: POST /orders rejects a body missing a required field");
    expect(missing?.steps.map((s) => (s.request as { json: unknown }).json)).toEqual([{ quantity: 2 }, { sku: "ABC-1234" }]);
  });
});
