// The Swagger Petstore 3.0 document (as shipped in @readme/oas-examples), tried as a new user would: uploaded to a
// project, drafts generated for the `pet` tag, activated and run against the Prism mock of the same document.
// Every draft passes, except unknown-id checks a static mock cannot satisfy, each of which carries a warning.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { automationsOf, createFeature, createProject, generate, json, runToEnd } from "./helpers/gen-flow";
import { type PrismMock, startPrism } from "./helpers/prism";
import { startTestServer, type TestServer } from "./helpers/server";

const PETSTORE = join(import.meta.dir, "..", "node_modules", "@readme", "oas-examples", "3.0", "json", "petstore.json");

let t: TestServer;
let mock: PrismMock;

beforeAll(async () => {
  [t, mock] = await Promise.all([startTestServer(), startPrism(PETSTORE)]);
}, 60_000);
afterAll(async () => {
  await Promise.all([t?.stop(), mock?.stop()]);
});

let project: string;

async function generateFor(tag: string) {
  const feature = await createFeature(t, project, { name: `Tag ${tag}`, target: { kind: "api", tags: [tag] } });
  const g = await generate(t, project, feature, "openapi");
  expect(g.status).toBe("succeeded");
  return { g, autos: await automationsOf(t, project, g) };
}

test("Petstore `pet` drafts run against the Prism mock: all pass but the unknown-id checks, each of which has a warning", async () => {
  project = await createProject(t, "petstore", { openapi: await Bun.file(PETSTORE).json() });
  await json(
    await t.call("POST", `/projects/${project}/environments`, {
      name: "mock",
      variables: { BASE_URL: mock.url },
      secrets: { API_TOKEN: "petstore-token-1", API_KEY: "petstore-key-1" },
    }),
    201,
  );
  const { g, autos } = await generateFor("pet");
  expect(autos).toHaveLength(16);
  // The required array query parameters are sent (explode: true, one item: `?status=available`).
  const byStatus = autos.find((a) => a.name === "findPetsByStatus: GET /pet/findByStatus answers 200");
  expect(byStatus?.steps[0]).toMatchObject({ request: { url: "/pet/findByStatus", query: { status: "available" } } });
  const failing: string[] = [];
  for (const a of autos) {
    await json(await t.call("PATCH", `/projects/${project}/automations/${a.id}`, { status: "active" }), 200);
    const run = await runToEnd(t, project, a.id, "mock");
    if (run.status !== "passed") failing.push(a.name);
  }
  expect(failing.sort()).toEqual([
    "deletePet: DELETE /pet/{petId} with an unknown id answers 404",
    "getPetById: GET /pet/{petId} with an unknown id answers 404",
  ]);
  for (const name of failing) {
    const warning = g.warnings.find((w) => w.message.startsWith(`"${name}" cannot pass against a static mock`));
    expect(warning?.message).toContain("987654321");
    expect(autos.find((a) => a.name === name)?.description).toContain("static mock");
  }
  // Operations with no 2xx documented say so rather than making a test that cannot pass.
  expect(g.warnings.map((w) => w.message)).toContain("No positive test for POST /pet: it documents no 2xx response");
}, 180_000);

test("an unknown id within the schema's bounds (getOrderById allows 1 to 10, so the test asks for 10); the create-then-read chain's warnings", async () => {
  const { g, autos } = await generateFor("store");
  const unknown = autos.find((a) => a.name === "getOrderById: GET /store/order/{orderId} with an unknown id answers 404");
  expect(unknown?.steps[0]).toMatchObject({ request: { url: "/store/order/10" }, expect: [{ status: 404 }] });
  expect(autos.find((a) => a.name === "getOrderById: GET /store/order/{orderId} answers 200")?.steps[0]).toMatchObject({ request: { url: "/store/order/1" } });
  expect(g.warnings.some((w) => w.message.includes("getOrderById") && w.message.includes("orderId 10"))).toBe(true);
  // The create-then-read chain says why it may not pass: the read takes ids 1 to 10 only, and the created id's
  // schema promises no such bound; and a static mock answers the read with its own example.
  const chain = '"placeOrder then getOrderById: what is created can be read"';
  expect(g.warnings.map((w) => w.message).filter((m) => m.startsWith(chain))).toEqual([
    `${chain} may be refused: the path parameter "orderId" of GET /store/order/{orderId} allows only minimum 1, maximum 10, which the created id's schema does not promise`,
    `${chain} cannot pass against a static mock: it checks the id read is the one created, and a static mock (one answering from the document's examples, such as Prism) answers the read with its own example, not what was created`,
  ]);
});
