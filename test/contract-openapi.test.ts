// The OpenAPI document: a reviewed snapshot, every status and header the server really sends declared, and real
// responses that keep it (test/helpers/contract.ts checks every `call` of every test the same way).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildOpenApiDocument } from "../src/http/openapi";
import { operations } from "../src/manifest";
import { contractChecker } from "./helpers/contract";
import { startTestServer, type TestServer } from "./helpers/server";

type Json = Record<string, unknown>;
type Responses = Record<string, { headers?: Record<string, unknown> }>;

const doc = buildOpenApiDocument("0.0.0-snapshot", { rateLimits: true });
const paths = doc.paths as Record<string, Record<string, { operationId: string; responses: Responses; parameters: Json[] }>>;
const entries = Object.values(paths).flatMap((item) => Object.values(item));

describe("the OpenAPI document", () => {
  test("matches its reviewed snapshot (accept a reviewed change with bun test --update-snapshots)", () => {
    expect(JSON.stringify(doc, null, 2)).toMatchSnapshot();
  });

  test("every operation declares 400, 401, 413, 429, 500 and 503, with X-Request-Id on every response", () => {
    for (const e of entries) {
      for (const status of ["400", "401", "413", "429", "500", "503"])
        expect({ op: e.operationId, status, declared: status in e.responses }).toEqual({ op: e.operationId, status, declared: true });
      for (const [status, r] of Object.entries(e.responses)) {
        expect({ op: e.operationId, status, headers: Object.keys(r.headers ?? {}) }).toMatchObject({
          headers: expect.arrayContaining(["X-Request-Id", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"]),
        });
      }
      for (const status of ["429", "503"]) expect(Object.keys(e.responses[status]?.headers ?? {})).toContain("Retry-After");
    }
  });

  test("without rate limits, no 429 and no RateLimit-* headers are promised", () => {
    const off = buildOpenApiDocument("0.0.0-snapshot", { rateLimits: false });
    const text = JSON.stringify(off.paths);
    expect(text).not.toContain('"429"');
    expect(text).not.toContain("RateLimit-");
  });

  test("state changes declare 403 (a web session without its CSRF token), paths with ids 404, JSON bodies 415", () => {
    for (const op of operations) {
      const r = paths[`/api/v1/ops${op.path}`]?.[op.method.toLowerCase()]?.responses ?? {};
      if (op.method !== "GET") expect({ op: op.name, has403: "403" in r }).toEqual({ op: op.name, has403: true });
      if (op.path.includes("{")) expect({ op: op.name, has404: "404" in r }).toEqual({ op: op.name, has404: true });
      if (op.body) expect({ op: op.name, has415: "415" in r }).toEqual({ op: op.name, has415: true });
    }
  });

  test("Idempotency-Key is a request header of exactly the operations that honour it", () => {
    const honouring = entries
      .filter((e) => JSON.stringify(e.parameters).includes("IdempotencyKey"))
      .map((e) => e.operationId)
      .sort();
    expect(honouring).toEqual(
      operations
        .filter((o) => o.startsWork)
        .map((o) => o.name)
        .sort(),
    );
    expect(honouring.length).toBeGreaterThan(0);
    const param = (doc.components as { parameters: Record<string, Json> }).parameters.IdempotencyKey;
    expect(param).toMatchObject({ name: "Idempotency-Key", in: "header" });
  });

  test("405 is described, with its Allow header", () => {
    const r = (doc.components as { responses: Record<string, { headers: Json }> }).responses.MethodNotAllowed;
    expect(Object.keys(r?.headers ?? {})).toContain("Allow");
  });
});

describe("real responses keep the document", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ max_body_bytes: 1024, rate_limit: { per_workspace_per_hour: 3 } });
  });
  afterAll(() => s.stop());

  test("an operation without a body, sent one over the limit, answers a declared 413", async () => {
    const res = await s.call("DELETE", "/projects/nope", "x".repeat(4096));
    expect(res.status).toBe(413);
  });

  test("a wrong method answers 405 with Allow", async () => {
    const res = await s.call("PUT", "/projects");
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
  });

  test("the workspace's budget spent: a declared 429 with Retry-After and the RateLimit headers", async () => {
    let res = await s.call("GET", "/projects");
    for (let i = 0; i < 5 && res.status !== 429; i++) res = await s.call("GET", "/projects");
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).not.toBeNull();
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
  });

  test("the checker refuses an undeclared status and a body off its schema", async () => {
    const checker = contractChecker(true);
    const headers = { "content-type": "application/json", "x-request-id": "req_1" };
    expect(await checker.problems("GET", "/projects", new Response("{}", { status: 409, headers }))).toEqual([expect.stringContaining("status not declared")]);
    expect(await checker.problems("GET", "/projects", new Response(JSON.stringify({ data: "no" }), { status: 200, headers }))).toEqual([
      expect.stringContaining("does not match"),
    ]);
    expect(await checker.problems("GET", "/projects", new Response(JSON.stringify({ data: [], next_cursor: null }), { status: 200, headers }))).toEqual([]);
  });
});
