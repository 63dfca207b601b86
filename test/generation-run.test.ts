// Generated drafts RUN by the run engine against the local target app: gherkin (http and browser), openapi
// (positive tests pass; a broken response fails the schema check with a clear message) and crawl smoke tests.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SHOP_CRITERIA, startTargetApp, TARGET_API_TOKEN, type TargetApp } from "./helpers/gen-target-app";
import { automationsOf, createFeature, createProject, generate, json, runToEnd } from "./helpers/gen-flow";
import { startTestServer, type TestServer } from "./helpers/server";

let t: TestServer;
let app: TargetApp;
let broken: TargetApp;
let project: string;

beforeAll(async () => {
  app = startTargetApp();
  broken = startTargetApp({ brokenItemSchema: true });
  t = await startTestServer({ generation: { crawl_max_pages: 5 } });
  project = await createProject(t, "run-shop", { openapi: app.openapi });
  const env = (name: string, BASE_URL: string) =>
    t.call("POST", `/projects/${project}/environments`, { name, variables: { BASE_URL }, secrets: { API_TOKEN: TARGET_API_TOKEN } });
  await json(await env("site", app.url), 201);
  await json(await env("api", app.apiUrl), 201);
  await json(await env("broken-api", broken.apiUrl), 201);
});
afterAll(async () => {
  await t.stop();
  await app.stop();
  await broken.stop();
});

describe("generated automations run", () => {
  test("gherkin drafts (http and browser, with a heading that shares the button's words) all pass", async () => {
    const feature = await createFeature(t, project, { name: "Shop", acceptance_criteria: SHOP_CRITERIA });
    const g = await generate(t, project, feature);
    const autos = await automationsOf(t, project, g);
    expect(autos).toHaveLength(5);
    for (const a of autos) {
      const run = await runToEnd(t, project, a.id, "site");
      expect({ name: a.name, status: run.status, error: run.error }).toEqual({ name: a.name, status: "passed", error: null });
      // Step names read as a person says them: the button's name, never a selector chain.
      if (a.name === "Sign in works") {
        expect(run.steps?.map((s) => s.name)).toEqual([
          "goto /",
          'click "Sign in"',
          'expect url "/login"',
          'fill "Email"',
          'fill "Password"',
          'click "Sign in"',
          'expect text "Welcome"',
          'expect url "/dashboard"',
          'click "Show details"',
          'expect text "Order history"',
        ]);
      }
    }
  }, 120_000);

  test("openapi drafts pass against the app; against a broken response the schema check fails with a clear message", async () => {
    const feature = await createFeature(t, project, { name: "API", target: { kind: "api", tags: ["items", "profile"] } });
    const g = await generate(t, project, feature, "openapi");
    const autos = await automationsOf(t, project, g);
    expect(autos.length).toBe(8);
    for (const a of autos) {
      const run = await runToEnd(t, project, a.id, "api");
      expect({ name: a.name, status: run.status, steps: run.steps?.filter((s) => s.status !== "passed") }).toEqual({
        name: a.name,
        status: "passed",
        steps: [],
      });
    }
    const readItem = autos.find((a) => a.name === "getItem: GET /items/{id} answers 200");
    expect(readItem).toBeDefined();
    const run = await runToEnd(t, project, readItem?.id ?? "", "broken-api");
    expect(run.status).toBe("failed");
    const failed = run.steps?.find((s) => s.status === "failed");
    expect(failed?.message).toContain("schema");
    expect(failed?.message).toContain("price");
    expect(failed?.message).toBe("schema: expected the body to match the JSON Schema, got /price must be number");
  }, 120_000);

  test("crawl smoke drafts pass in headless Chromium", async () => {
    const feature = await createFeature(t, project, { name: "Site", target: { kind: "web", url: `${app.url}/` } });
    const g = await generate(t, project, feature, "crawl");
    const autos = await automationsOf(t, project, g);
    expect(autos.length).toBe(7);
    for (const a of autos) {
      const run = await runToEnd(t, project, a.id, "site");
      expect({ name: a.name, status: run.status, error: run.error }).toEqual({ name: a.name, status: "passed", error: null });
      expect(run.steps?.filter((s) => s.name.includes("internal:") || s.name.includes("role="))).toEqual([]);
      if (a.name === "Form on /about has its fields") {
        expect(run.steps?.map((s) => s.name)).toEqual([`goto ${app.url}/about`, 'expect visible placeholder "Search"', 'expect visible select[name="sort"]']);
      }
    }
  }, 120_000);
});
