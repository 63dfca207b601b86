// Whatever the Host header says, every route answers: a short upstream name (`Host: svc`, as nginx sends for an
// upstream named svc) routes like any other, HTTP/1.0 without Host is served, and a malformed Host is a JSON 400.
// Raw TCP, because fetch always sends a well-formed Host of its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let port: number;
beforeAll(async () => {
  s = await startTestServer();
  port = Number(new URL(s.url).port);
});
afterAll(() => s.stop());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends one request as written (the server closes the connection after it) and parses the answer. */
function rawRequest(head: string, body = ""): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      const [statusLine = "", ...lines] = text.slice(0, split).split("\r\n");
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(":")).toLowerCase()] = line.slice(line.indexOf(":") + 1).trim();
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: text.slice(split + 4) });
    });
    socket.write(`${head}\r\n\r\n${body}`);
  });
}

const http11 = (method: string, path: string, host: string, extra: string[] = []) =>
  [`${method} ${path} HTTP/1.1`, `Host: ${host}`, "Connection: close", ...extra].join("\r\n");
const auth = () => `Authorization: Bearer ${s.key}`;

test.each(["svc", "ab", "a", "svc:8080", "10.0.0.1"])("Host: %s reaches every kind of route", async (host) => {
  const health = await rawRequest(http11("GET", "/healthz", host));
  expect({ status: health.status, body: JSON.parse(health.body) }).toEqual({ status: 200, body: { status: "ok" } });

  const name = `Via ${host}`;
  const json = JSON.stringify({ name });
  const created = await rawRequest(
    http11("POST", "/api/v1/ops/projects", host, [auth(), "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(json)}`]),
    json,
  );
  expect(created.status).toBe(201);
  const listed = await rawRequest(http11("GET", "/api/v1/ops/projects?limit=200", host, [auth()]));
  expect(listed.status).toBe(200);
  expect((JSON.parse(listed.body) as { data: { name: string }[] }).data.map((p) => p.name)).toContain(name);

  const unknown = await rawRequest(http11("GET", "/api/v1/ops/no-such-route", host, [auth()]));
  expect({ status: unknown.status, error: JSON.parse(unknown.body).error }).toEqual({ status: 404, error: "not_found" });
  const wrongMethod = await rawRequest(http11("PUT", "/api/v1/ops/projects", host, [auth(), "Content-Length: 0"]));
  expect({ status: wrongMethod.status, error: JSON.parse(wrongMethod.body).error }).toEqual({ status: 405, error: "method_not_allowed" });

  // Links the server hands out name the address the client used.
  const install = await rawRequest(http11("GET", "/install.sh", host));
  expect(install.status).toBe(200);
  expect(install.body).toContain(`http://${host}`);
});

test("HTTP/1.0 without a Host header is served", async () => {
  const health = await rawRequest("GET /healthz HTTP/1.0");
  expect({ status: health.status, body: JSON.parse(health.body) }).toEqual({ status: 200, body: { status: "ok" } });
  const listed = await rawRequest(["GET /api/v1/ops/projects HTTP/1.0", auth()].join("\r\n"));
  expect(listed.status).toBe(200);
  expect(JSON.parse(listed.body)).toHaveProperty("data");
  const unknown = await rawRequest(["GET /api/v1/ops/no-such-route HTTP/1.0", auth()].join("\r\n"));
  expect({ status: unknown.status, type: unknown.headers["content-type"], error: JSON.parse(unknown.body).error }).toEqual({
    status: 404,
    type: "application/json; charset=utf-8",
    error: "not_found",
  });
});

test.each(["a b", "[::1", "x:99999", "", "a@b", "a, b", "[zz::1]"])("a malformed Host (%j) is a JSON 400 naming it, and changes nothing", async (host) => {
  const before = await s.call("GET", "/projects?limit=200");
  for (const path of ["/healthz", "/api/v1/ops/projects"]) {
    const json = JSON.stringify({ name: `Bad host ${host}` });
    const r = await rawRequest(http11("POST", path, host, [auth(), "Content-Type: application/json", `Content-Length: ${json.length}`]), json);
    expect({ status: r.status, type: r.headers["content-type"] }).toEqual({ status: 400, type: "application/json; charset=utf-8" });
    const body = JSON.parse(r.body);
    expect(body).toMatchObject({ error: "invalid_request", details: [{ path: "Host" }] });
    expect(body.message).toContain(JSON.stringify(host));
    expect(r.headers["x-request-id"]).toMatch(/^req_/);
  }
  const get = await rawRequest(http11("GET", "/healthz", host));
  expect({ status: get.status, error: JSON.parse(get.body).error }).toEqual({ status: 400, error: "invalid_request" });
  expect(await (await s.call("GET", "/projects?limit=200")).text()).toBe(await before.text());
});
