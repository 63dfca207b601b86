// Every API answer is private and typed: `Cache-Control: no-store` (no shared cache keeps one caller's data),
// `X-Content-Type-Options: nosniff` and a request id — on answers from the response cache, on errors and on
// artifacts alike.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

function expectPrivate(res: Response): void {
  expect(res.headers.get("cache-control")).toBe("no-store");
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(res.headers.get("x-request-id")).toMatch(/^req_/);
}

test("reads (computed, then from the response cache), writes and errors", async () => {
  expectPrivate(await s.call("POST", "/projects", { name: "Headers" }));
  const first = await s.call("GET", "/projects");
  const second = await s.call("GET", "/projects");
  expect(await second.text()).toBe(await first.text());
  expectPrivate(first);
  expectPrivate(second);
  expect(second.headers.get("ratelimit-remaining")).not.toBeNull();
  expectPrivate(await s.call("GET", "/projects/nope"));
  expectPrivate(await s.call("GET", "/projects", undefined, null));
  expectPrivate(await fetch(`${s.url}/api/v1/no/such/route`));
});
