// The published OpenAPI document as a client generated from it reads it: a request body it declares valid is one
// the server accepts, and a query parameter is sent in the style it declares and filtered on. Both are read from
// GET /api/v1/openapi.json of a real server, not from the code that builds the document.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { startTestServer, type TestServer } from "./helpers/server";

type Json = Record<string, unknown>;

let s: TestServer;
let doc: Json;
let ajv: Ajv2020;

function operation(path: string, method: string): Json {
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const op = paths[`/api/v1/ops${path}`]?.[method];
  if (!op) throw new Error(`the document has no ${method} ${path}`);
  return op;
}

/** The problems the document finds in a request body, as a generated client would check it before sending. */
function bodyProblems(path: string, method: string, body: unknown): string[] {
  const pointer = `/api/v1/ops${path}`.replace(/~/g, "~0").replace(/\//g, "~1");
  const validate = ajv.getSchema(`svc-openapi#/paths/${pointer}/${method}/requestBody/content/application~1json/schema`);
  if (!validate) throw new Error(`no request body schema for ${method} ${path}`);
  return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  doc = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as Json;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "svc-openapi", paths: doc.paths, components: doc.components });
  expect((await s.call("POST", "/projects", { name: "Shop", slug: "shop" })).status).toBe(201);
});

afterAll(async () => {
  await s.stop();
});

describe("a request body the document declares valid is accepted", () => {
  // The step's method has a default and is read in any case: a body without it, or with it in lower case, is valid.
  const step = (request: Json) => [{ request, expect: [{ status: 200 }] }];
  const scenarios: { name: string; body: Json }[] = [
    { name: "an http step without a method", body: { name: "no method", kind: "http", steps: step({ url: "http://127.0.0.1:9/" }) } },
    { name: "an http step with a lower-case method", body: { name: "lower case", kind: "http", steps: step({ method: "post", url: "http://127.0.0.1:9/" }) } },
  ];
  for (const { name, body } of scenarios) {
    test(name, async () => {
      expect(bodyProblems("/projects/{project}/automations", "post", body)).toEqual([]);
      const res = await s.call("POST", "/projects/shop/automations", body);
      expect(res.status).toBe(201);
    });
  }

  test("a field the server fills in is never required of the request", () => {
    const components = (doc.components as { schemas: Record<string, { required?: string[] }> }).schemas;
    // The HTTP request of a step as sent (its input) lists only the url as required.
    const request = components.HttpRequestInput;
    expect(request?.required).toEqual(["url"]);
  });
});

describe("a map in the query string, sent as the document declares it", () => {
  test("list_runs declares metadata as a deepObject and filters on metadata[KEY]=VALUE", async () => {
    const param = (operation("/projects/{project}/runs", "get").parameters as Json[]).find((p) => p.name === "metadata");
    expect(param).toMatchObject({ in: "query", style: "deepObject", explode: true });

    const created = await s.call("POST", "/projects/shop/automations", {
      name: "tagged runs",
      kind: "http",
      steps: [{ request: { url: "http://127.0.0.1:9/" } }],
    });
    const automation = (await created.json()).id as string;
    const run = async (metadata: Record<string, string>) => {
      const res = await s.call("POST", `/projects/shop/automations/${automation}/run`, { metadata });
      expect(res.status).toBe(202);
      return (await res.json()).id as string;
    };
    const onMain = await run({ branch: "main" });
    await run({ branch: "feature/x" });

    // As a generated client encodes metadata={branch: "main"} in the deepObject style.
    const query = new URLSearchParams({ "metadata[branch]": "main" }).toString();
    const res = await s.call("GET", `/projects/shop/runs?${query}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: { id: string }[] };
    expect(page.data.map((r) => r.id)).toEqual([onMain]);

    // The dotted form the CLI sends answers the same.
    const dotted = await s.call("GET", "/projects/shop/runs?metadata.branch=main");
    expect(((await dotted.json()) as { data: { id: string }[] }).data.map((r) => r.id)).toEqual([onMain]);
  });
});
