// Hostile OpenAPI documents are bounded: an upload that would expand past the limits is refused with a 400 naming
// the limit, a generation's drafts stop at the output limits with warnings naming them, and the API answers
// meanwhile. The server runs as its own process, so a blocked server shows as an unanswered /healthz here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import type { Subprocess } from "bun";
import { type AutomationRecord, type GenerationRecord, json } from "./helpers/gen-flow";
import { explodingOutputDocument, fanOutDocument } from "./helpers/hostile-openapi";
import { databaseEnv, startTestServer, tempDir } from "./helpers/server";

const MAIN = resolve(import.meta.dir, "../src/main.ts");
/** Generous: a healthy server answers /healthz in milliseconds; a blocked one does not answer for seconds. */
const RESPONSIVE_MS = 1_000;

let dataDir: string;
let key: string;
let url: string;
let proc: Subprocess<"ignore", "ignore", "pipe">;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${url}/api/v1/ops${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  // A key, and a project whose document was stored before uploads were bounded, written straight to the database.
  dataDir = tempDir();
  const setup = await startTestServer({ data_dir: dataDir });
  key = setup.key;
  await setup.call("POST", "/projects", { name: "legacy", slug: "legacy" });
  await setup.server.core.db
    .updateTable("projects")
    .set({ openapi: JSON.stringify(fanOutDocument()) })
    .where("slug", "=", "legacy")
    .execute();
  await setup.stop();

  proc = Bun.spawn(["bun", MAIN, "serve", "--port", "0", "--data-dir", dataDir], {
    env: { ...process.env, SVC_LOG_LEVEL: "info", SVC_RATE_LIMIT_ENABLED: "false", ...(await databaseEnv(dataDir)) },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const reader = proc.stderr.getReader();
  let logs = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`svc serve exited: ${logs}`);
    logs += new TextDecoder().decode(value);
    const m = /svc listening on (\S+)/.exec(logs);
    if (m?.[1]) {
      url = m[1];
      break;
    }
  }
  // Keep draining its logs so the server never blocks on a full pipe.
  void (async () => {
    for (;;) if ((await reader.read()).done) break;
  })().catch(() => undefined);
}, 30_000);

afterAll(async () => {
  proc?.kill("SIGKILL");
  await proc?.exited;
  rmSync(dataDir, { recursive: true, force: true });
});

/** Polls /healthz back to back while `work` is under way: the worst latency, and whether every poll was answered. */
async function whileWorking<T>(work: Promise<T>): Promise<T> {
  let settled = false;
  const tracked = work.finally(() => (settled = true));
  let worst = 0;
  while (!settled) {
    const t = performance.now();
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(RESPONSIVE_MS * 5) }).catch((e: Error) => e);
    worst = Math.max(worst, performance.now() - t);
    if (res instanceof Error) throw new Error(`/healthz went unanswered for ${RESPONSIVE_MS * 5} ms while the work was under way`);
    expect(res.status).toBe(200);
    await Bun.sleep(20);
  }
  expect(worst).toBeLessThan(RESPONSIVE_MS);
  return tracked;
}

async function startGeneration(project: string, target: Record<string, unknown>): Promise<GenerationRecord> {
  const feature = await json<{ id: string }>(await call("POST", `/projects/${project}/features`, { name: "All operations", target }), 201);
  const path = `/projects/${project}/features/${feature.id}/generation`;
  await json(await call("POST", path, { strategy: "openapi" }), 202);
  return whileWorking(
    (async () => {
      for (;;) {
        const g = await json<GenerationRecord>(await call("GET", path), 200);
        if (!["queued", "running"].includes(g.status)) return g;
        await Bun.sleep(50);
      }
    })(),
  );
}

async function draftsOf(project: string, g: GenerationRecord): Promise<{ drafts: AutomationRecord[]; bytes: number }> {
  const drafts: AutomationRecord[] = [];
  let bytes = 0;
  for (const id of g.automation_ids) {
    const text = await (await call("GET", `/projects/${project}/automations/${id}`)).text();
    bytes += text.length;
    drafts.push(JSON.parse(text) as AutomationRecord);
  }
  return { drafts, bytes };
}

const KB = 1024;
const MB = 1024 * KB;
const allOperations = { kind: "api", tags: [], paths: [] };

describe("uploaded OpenAPI documents are bounded", () => {
  test("a ~4 KB document whose schemas reference the next one ten times per level → 400 naming the expansion limit, the API answering meanwhile, and nothing stored", async () => {
    const doc = fanOutDocument();
    expect(JSON.stringify(doc).length).toBeLessThan(5 * KB);
    await json(await call("POST", "/projects", { name: "shop", slug: "shop" }), 201);
    for (const [method, path, body] of [
      ["PATCH", "/projects/shop", { openapi: doc }],
      ["POST", "/projects", { name: "fan-out", slug: "fan-out", openapi: doc }],
    ] as const) {
      const res = await whileWorking(call(method, path, body));
      const err = await json<{ error: string; message: string; details: { path: string; message: string }[] }>(res, 400);
      expect(err.error).toBe("invalid_request");
      expect(err.message).toContain("the document expands past 500000 nodes when its $refs are followed");
      expect(err.details[0]?.path).toStartWith("openapi.components.schemas.A.properties.p0");
    }
    const shop = await json<{ has_openapi: boolean }>(await call("GET", "/projects/shop"), 200);
    expect(shop.has_openapi).toBe(false);
    expect((await call("GET", "/projects/fan-out")).status).toBe(404);
  }, 30_000);

  test("a document nested deeper than 100 levels → 400 naming the depth limit", async () => {
    // Written, it nests a few levels; with its $refs followed, each schema puts the next two levels deeper.
    const schemas: Record<string, unknown> = { S60: { type: "string" } };
    for (let i = 0; i < 60; i++) schemas[`S${i}`] = { type: "object", properties: { inner: { $ref: `#/components/schemas/S${i + 1}` } } };
    const doc = {
      openapi: "3.0.3",
      info: { title: "Deep", version: "1" },
      paths: {
        "/deep": { get: { responses: { "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/components/schemas/S0" } } } } } } },
      },
      components: { schemas },
    };
    const err = await json<{ error: string; message: string; details: { path: string }[] }>(
      await call("POST", "/projects", { name: "deep", slug: "deep", openapi: doc }),
      400,
    );
    expect(err.message).toContain("the document nests deeper than 100 levels");
    expect(err.details[0]?.path).toStartWith("openapi.");
    // Nested that deep as written, the request body itself is refused first (bodies nest at most 64 levels).
    let schema: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 60; i++) schema = { type: "object", properties: { inner: schema } };
    const literal = {
      ...doc,
      paths: { "/deep": { get: { responses: { "200": { description: "ok", content: { "application/json": { schema } } } } } } },
      components: {},
    };
    const refused = await json<{ error: string; message: string }>(await call("POST", "/projects", { name: "deep", slug: "deep", openapi: literal }), 400);
    expect(refused.message).toContain("nested deeper than 64 levels");
    expect((await call("GET", "/projects/deep")).status).toBe(404);
  });
});

describe("openapi generation is bounded", () => {
  test("a 3.7 KB document whose sample bodies explode → bounded drafts, warnings naming each limit hit, the API answering meanwhile", async () => {
    const doc = explodingOutputDocument();
    expect(JSON.stringify(doc).length).toBeLessThan(4 * KB);
    await json(await call("POST", "/projects", { name: "exploding", slug: "exploding", openapi: doc }), 201);
    const g = await startGeneration("exploding", allOperations);
    expect(g.status).toBe("succeeded");
    const messages = g.warnings.map((w) => w.message);
    expect(messages).toEqual(
      [0, 1, 2, 3].flatMap((i) => [
        `The request body schema of POST /op${i} expands past 10000 nodes with its $refs followed (the limit for one schema): its sample body is built from the part within the limit`,
        `The sample request body of POST /op${i} was cut at 1000 values (the limit for one sample body)`,
        `The 200 response schema of POST /op${i} expands past 10000 nodes with its $refs followed (the limit for one schema): the positive test checks the status only`,
      ]),
    );
    const { drafts, bytes } = await draftsOf("exploding", g);
    expect(drafts.map((d) => d.name).sort()).toEqual(
      [0, 1, 2, 3].flatMap((i) => [`op${i}: POST /op${i} answers 200`, `op${i}: POST /op${i} rejects a body missing a required field`]),
    );
    for (const d of drafts) expect(JSON.stringify(d.steps).length).toBeLessThanOrEqual(256 * KB);
    expect(bytes).toBeLessThan(2 * MB);
  }, 60_000);

  test("a draft whose steps pass 256 KB is left out, and the drafts of one generation stop at 8 MB in all, with warnings saying so", async () => {
    // One operation posting a 300 KB example, then 150 each posting a 60 KB one: 9 MB of drafts without the limit.
    const paths: Record<string, unknown> = {
      "/huge": {
        post: {
          operationId: "huge",
          requestBody: { content: { "application/json": { schema: { type: "string", example: "h".repeat(300 * KB) } } } },
          responses: { "201": { description: "created" } },
        },
      },
    };
    for (let i = 0; i < 150; i++) {
      paths[`/notes${i}`] = {
        post: {
          operationId: `note${i}`,
          requestBody: { content: { "application/json": { schema: { $ref: "#/components/schemas/Note" } } } },
          responses: { "201": { description: "created" } },
        },
      };
    }
    const doc = {
      openapi: "3.0.3",
      info: { title: "Notes", version: "1" },
      components: { schemas: { Note: { type: "string", example: "n".repeat(60 * KB) } } },
      paths,
    };
    await json(await call("POST", "/projects", { name: "notes", slug: "notes", openapi: doc }), 201);
    const g = await startGeneration("notes", allOperations);
    expect(g.status).toBe("succeeded");
    const messages = g.warnings.map((w) => w.message);
    expect(messages[0]).toBe('Left out "huge: POST /huge answers 201": its steps take more than 256 KB as JSON (the limit for one draft)');
    expect(messages[1]).toMatch(
      /^Stopped after operation \d+ of 151: the drafts of one generation take at most 8 MB as JSON \(the limit for one generation\)$/,
    );
    expect(messages).toHaveLength(2);
    const { drafts, bytes } = await draftsOf("notes", g);
    expect(drafts.length).toBeGreaterThan(100);
    expect(drafts.length).toBeLessThan(150);
    expect(drafts.map((d) => d.name)).not.toContain("huge: POST /huge answers 201");
    expect(bytes).toBeLessThanOrEqual(8 * MB + drafts.length * 2 * KB);
  }, 60_000);

  test("a fan-out document stored before uploads were bounded → the generation fails naming the limit, the API answering meanwhile", async () => {
    const g = await startGeneration("legacy", allOperations);
    expect(g.status).toBe("failed");
    expect(g.error).toContain("the document expands past 500000 nodes when its $refs are followed");
  }, 60_000);
});
