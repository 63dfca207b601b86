// LLM generation against a local OpenAI-compatible server started by the test: a valid answer makes drafts, an
// invalid one gets one repair round (then is rejected), and a hanging or failing provider fails the job in time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { automationsOf, createFeature, createProject, generate, type GenerationRecord, json } from "./helpers/gen-flow";
import { startTargetApp, type TargetApp } from "./helpers/gen-target-app";
import { startTestServer, type TestServer } from "./helpers/server";

type Behaviour = "valid" | "invalid" | "null" | "hang" | "error";

const VALID = {
  automations: [
    {
      name: "item 1 exists",
      kind: "http",
      steps: [{ name: "get item", request: { method: "GET", url: "/api/items/1" }, expect: [{ status: 200 }, { json: "$.id", equals: 1 }] }],
    },
    { name: "home shows the shop", kind: "browser", tags: ["smoke"], steps: [{ goto: "/" }, { expect: { text: "Acme Shop" } }] },
  ],
};
// Wrong on purpose: an unknown kind, and an http automation with a browser step.
const INVALID = {
  automations: [
    { name: "bad", kind: "soap", steps: [] },
    { name: "mixed", kind: "http", steps: [{ goto: "/" }] },
  ],
};

interface Received {
  authorization: string | null;
  body: { model: string; messages: { role: string; content: string }[] };
}

let script: Behaviour[] = [];
const received: Received[] = [];
let llm: Server<undefined>;
let t: TestServer;
let project: string;
let app: TargetApp;
const TIMEOUT_MS = 1500;

function answer(content: unknown): Response {
  return Response.json({
    id: "cmpl-1",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(content) }, finish_reason: "stop" }],
  });
}

beforeAll(async () => {
  llm = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname !== "/v1/chat/completions") return new Response("no", { status: 404 });
      received.push({ authorization: req.headers.get("authorization"), body: (await req.json()) as Received["body"] });
      const next = script.shift() ?? "error";
      if (next === "valid") return answer(VALID);
      if (next === "invalid") return answer(INVALID);
      if (next === "null") return answer(null);
      if (next === "error") return Response.json({ error: { message: "model overloaded" } }, { status: 503 });
      return new Promise<Response>(() => undefined);
    },
  });
  process.env.SVC_TEST_LLM_KEY = "sk-local-test-key";
  t = await startTestServer({
    generation: { llm: { base_url: `http://127.0.0.1:${llm.port}/v1`, model: "test-model", api_key_env: "SVC_TEST_LLM_KEY", timeout_ms: TIMEOUT_MS } },
  });
  project = await createProject(t, "llm-shop");
  app = startTargetApp();
});
afterAll(async () => {
  await app.stop();
  await t.stop();
  await llm.stop(true);
  delete process.env.SVC_TEST_LLM_KEY;
});

describe("llm generation", () => {
  test("a valid answer → drafts; the prompt carries the feature, its criteria and the automation schema", async () => {
    script = ["valid"];
    received.length = 0;
    const feature = await createFeature(t, project, { name: "Items page", description: "Shows the shop's items", acceptance_criteria: "- item 1 is listed" });
    const g = await generate(t, project, feature, "llm");
    expect(g.status).toBe("succeeded");
    expect(g.warnings).toEqual([]);
    const autos = await automationsOf(t, project, g);
    expect(autos.map((a) => [a.name, a.kind, a.status, a.source])).toEqual([
      ["item 1 exists", "http", "draft", "generated"],
      ["home shows the shop", "browser", "draft", "generated"],
    ]);
    expect(autos[1]?.tags).toEqual(["generated", "llm", "smoke"]);
    expect(received).toHaveLength(1);
    expect(received[0]?.authorization).toBe("Bearer sk-local-test-key");
    expect(received[0]?.body.model).toBe("test-model");
    const prompt = received[0]?.body.messages.map((m) => m.content).join("\n") ?? "";
    expect(prompt).toContain("Feature: Items page");
    expect(prompt).toContain("- item 1 is listed");
    expect(prompt).toContain('"$schema":"https://json-schema.org/draft/2020-12/schema"');
  });

  test("for an api feature the prompt carries the OpenAPI operations it covers, and only those", async () => {
    const withDoc = await createProject(t, "llm-api", { openapi: app.openapi });
    script = ["valid"];
    received.length = 0;
    const feature = await createFeature(t, withDoc, { name: "Profile", target: { kind: "api", tags: ["profile"] } });
    expect((await generate(t, withDoc, feature, "llm")).status).toBe("succeeded");
    expect(received).toHaveLength(1);
    const user = received[0]?.body.messages.find((m) => m.role === "user")?.content ?? "";
    const marker = "The OpenAPI operations it covers:\n";
    expect(user).toContain(marker);
    const fragment = JSON.parse(user.slice(user.indexOf(marker) + marker.length)) as Record<string, unknown>[];
    expect(fragment).toEqual([expect.objectContaining({ operation: "getProfile", method: "GET", path: "/profile" })]);
    // The document's security and response schema for that operation travel with it.
    expect(JSON.stringify(fragment[0])).toContain("bearer");
    expect(JSON.stringify(fragment[0])).toContain('"required":["user"]');
    expect(user).not.toContain("listItems");
    expect(user).not.toContain("The outline of its page");
  });

  test("a document whose operations outgrow the prompt: whole operations only, as many as fit, and a warning saying how many", async () => {
    const paths = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [
        `/things${i}/{id}`,
        {
          get: {
            operationId: `getThing${i}`,
            parameters: [{ name: "id", in: "path", required: true, schema: { type: "integer" } }],
            responses: {
              "200": {
                description: "the thing",
                content: {
                  "application/json": {
                    schema: { type: "object", required: ["id", "name"], properties: { id: { type: "integer" }, name: { type: "string" } } },
                  },
                },
              },
              "404": { description: "no such thing" },
            },
          },
        },
      ]),
    );
    const big = await createProject(t, "llm-big-api", { openapi: { openapi: "3.0.3", info: { title: "Things", version: "1" }, paths } });
    script = ["valid"];
    received.length = 0;
    const feature = await createFeature(t, big, { name: "Things", target: { kind: "api" } });
    const g = await generate(t, big, feature, "llm");
    expect(g.status).toBe("succeeded");
    const user = received[0]?.body.messages.find((m) => m.role === "user")?.content ?? "";
    const marker = "The OpenAPI operations it covers:\n";
    const fragment = JSON.parse(user.slice(user.indexOf(marker) + marker.length)) as { operation: string }[];
    expect(fragment.length).toBeGreaterThan(10);
    expect(fragment.length).toBeLessThan(300);
    expect(fragment[0]?.operation).toBe("getThing0");
    expect(g.warnings).toContainEqual(
      expect.objectContaining({ message: expect.stringContaining(`The prompt carries ${fragment.length} of the 300 OpenAPI operations the feature covers`) }),
    );
  });

  test("for a web feature the prompt carries the outline of its page: title, headings, links, form fields", async () => {
    script = ["valid"];
    received.length = 0;
    const feature = await createFeature(t, project, { name: "Sign-in page", target: { kind: "web", url: `${app.url}/login` } });
    expect((await generate(t, project, feature, "llm")).status).toBe("succeeded");
    expect(received).toHaveLength(1);
    const user = received[0]?.body.messages.find((m) => m.role === "user")?.content ?? "";
    const marker = "The outline of its page:\n";
    expect(user).toContain(marker);
    const outline = JSON.parse(user.slice(user.indexOf(marker) + marker.length));
    expect(outline).toMatchObject({
      url: `${app.url}/login`,
      title: "Sign in - Acme",
      headings: [{ level: 1, text: "Sign in" }],
      links: [{ url: `${app.url}/`, text: "Home" }],
    });
    expect(JSON.stringify(outline.forms)).toContain('label=\\"Email\\"');
    expect(JSON.stringify(outline.forms)).toContain('label=\\"Password\\"');
    expect(user).not.toContain("The OpenAPI operations it covers");
  });

  test("an invalid answer is sent back once with the validation errors; the corrected answer is used", async () => {
    script = ["invalid", "valid"];
    received.length = 0;
    const feature = await createFeature(t, project, { name: "Repair", acceptance_criteria: "- works" });
    const g = await generate(t, project, feature, "llm");
    expect(g.status).toBe("succeeded");
    expect(g.automation_ids).toHaveLength(2);
    expect(received).toHaveLength(2);
    const repair = received[1]?.body.messages ?? [];
    expect(repair.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(repair[3]?.content).toContain("automations.0.kind");
    expect(repair[3]?.content).toContain("automations.1.steps.0: an http automation takes only request steps");
    expect(g.warnings[0]?.message).toContain("its corrected answer was used");
  });

  test("an answer that is JSON but no object (null) is sent back for repair like any invalid answer, never an internal error", async () => {
    script = ["null", "valid"];
    received.length = 0;
    const feature = await createFeature(t, project, { name: "Null answer", acceptance_criteria: "- works" });
    const g = await generate(t, project, feature, "llm");
    expect({ status: g.status, error: g.error }).toEqual({ status: "succeeded", error: null });
    expect(g.automation_ids).toHaveLength(2);
    expect(received[1]?.body.messages[3]?.content).toContain("automations: expected a non-empty array of automations");
  });

  test("still invalid after one repair round → rejected with a warning, no drafts, no third request", async () => {
    script = ["invalid", "invalid", "valid"];
    received.length = 0;
    const feature = await createFeature(t, project, { name: "Rejected", acceptance_criteria: "- works" });
    const g = await generate(t, project, feature, "llm");
    expect(g.status).toBe("succeeded");
    expect(g.automation_ids).toEqual([]);
    expect(received).toHaveLength(2);
    expect(g.warnings).toEqual([expect.objectContaining({ generator: "llm", message: expect.stringContaining("still invalid after one repair round") })]);
    script = [];
  });

  test("a provider that hangs fails the job after the timeout, never hangs it", async () => {
    script = ["hang"];
    const feature = await createFeature(t, project, { name: "Hang", acceptance_criteria: "- works" });
    const started = Date.now();
    const g = await generate(t, project, feature, "llm");
    const took = Date.now() - started;
    expect(g.status).toBe("failed");
    expect(g.error).toBe(`the LLM provider at http://127.0.0.1:${llm.port}/v1 did not answer within ${TIMEOUT_MS} ms`);
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
    expect(took).toBeLessThan(TIMEOUT_MS + 5000);
  });

  test("cancel_generation stops a running job; the cancelled record is never overwritten", async () => {
    script = ["hang"];
    const feature = await createFeature(t, project, { name: "Cancel me", acceptance_criteria: "- works" });
    const path = `/projects/${project}/features/${feature}/generation`;
    await json(await t.call("POST", path, { strategy: "llm" }), 202);
    let running: GenerationRecord | null = null;
    for (let i = 0; i < 100 && !running; i++) {
      const g = await json<GenerationRecord>(await t.call("GET", path), 200);
      // The stage is written first and its total just after: wait for both.
      if (g.status === "running" && g.progress.stage === "llm" && g.progress.total > 0) running = g;
      else await Bun.sleep(20);
    }
    expect(running?.progress).toEqual({ stage: "llm", done: 0, total: 2 });
    const cancelled = await json<GenerationRecord>(await t.call("DELETE", path), 200);
    expect(cancelled.status).toBe("cancelled");
    await Bun.sleep(TIMEOUT_MS + 300);
    const after = await json<GenerationRecord>(await t.call("GET", path), 200);
    expect(after.status).toBe("cancelled");
    expect(after.error).toBeNull();
    expect(after.result).toBe("cancelled by request");
    // A new generation can start at once: the cancelled job no longer holds the feature.
    script = ["valid"];
    expect((await generate(t, project, feature, "llm")).status).toBe("succeeded");
  });

  test("an HTTP error of the provider fails the job with its status and message", async () => {
    script = ["error"];
    const feature = await createFeature(t, project, { name: "Overloaded", acceptance_criteria: "- works" });
    const g = await generate(t, project, feature, "llm");
    expect(g.status).toBe("failed");
    expect(g.error).toContain("answered HTTP 503");
    expect(g.error).toContain("model overloaded");
    expect(g.error).not.toContain("sk-local-test-key");
  });

  test("without [generation.llm] the llm strategy fails clearly and auto leaves it out", async () => {
    const plain = await startTestServer();
    try {
      const p = await createProject(plain, "no-llm");
      const f = await createFeature(plain, p, { name: "F", acceptance_criteria: 'Scenario: S\n  Given I open "/"\n' });
      const g = await generate(plain, p, f, "llm");
      expect(g.error).toBe("the llm strategy cannot run: no LLM is configured (set [generation.llm] base_url and model)");
      const auto = await generate(plain, p, f);
      expect(auto.status).toBe("succeeded");
      expect(auto.result).toStartWith("Ran gherkin (gherkin: 1).");
    } finally {
      await plain.stop();
    }
  });
});
