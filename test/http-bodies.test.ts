// Request bodies over the limit, however they arrive, get the JSON 413 and change nothing: a declared
// Content-Length far over it (refused before reading), a streamed body without a length (cut off while
// reading), and the web application's own routes; the server keeps serving afterwards.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

const LIMIT = 64 * 1024;
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ max_body_bytes: LIMIT, rate_limit: { enabled: false } });
});
afterAll(() => s.stop());

async function expect413(res: Response): Promise<void> {
  expect(res.status).toBe(413);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  expect(await res.json()).toEqual({ error: "payload_too_large", message: `the request body is larger than ${LIMIT} bytes` });
}

/** A body sent in 64 KiB chunks with no Content-Length (chunked transfer encoding). */
function streamed(totalBytes: number): ReadableStream<Uint8Array> {
  const chunk = new TextEncoder().encode(`{"name":"${"x".repeat(64 * 1024 - 12)}`.slice(0, 64 * 1024));
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.byteLength;
    },
  });
}

const projectNames = async () => ((await (await s.call("GET", "/projects")).json()) as { data: { name: string }[] }).data.map((p) => p.name);

test("just over the limit, twice it, and 50 times it: the same JSON 413", async () => {
  for (const size of [LIMIT + 1, LIMIT * 2 + 1, LIMIT * 50]) {
    await expect413(await s.call("POST", "/projects", JSON.stringify({ name: "x".repeat(size) })));
  }
  expect(await projectNames()).toEqual([]);
});

test("a streamed body without Content-Length is cut off at the limit with the JSON 413", async () => {
  const res = await fetch(`${s.api}/projects`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: streamed(LIMIT * 40),
  });
  await expect413(res);
  expect(await projectNames()).toEqual([]);
});

test("a streamed body under the limit is read whole", async () => {
  const body = new TextEncoder().encode(JSON.stringify({ name: "Streamed" }));
  const res = await fetch(`${s.api}/projects`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: new ReadableStream({ start: (c) => (c.enqueue(body.slice(0, 5)), c.enqueue(body.slice(5)), c.close()) }),
  });
  expect(res.status).toBe(201);
  expect(await projectNames()).toEqual(["Streamed"]);
});

test("the web application's routes refuse big bodies the same way", async () => {
  const res = await fetch(`${s.url}/api/v1/web/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: s.url },
    body: JSON.stringify({ email: "owner@acme.test", password: "p".repeat(200 * 1024) }),
  });
  expect(res.status).toBe(413);
  expect((await res.json()).error).toBe("payload_too_large");
});

test("afterwards the server answers as usual", async () => {
  expect((await s.call("GET", "/projects")).status).toBe(200);
  expect((await s.call("POST", "/projects", { name: "After" })).status).toBe(201);
});
