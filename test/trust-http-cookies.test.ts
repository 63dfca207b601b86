// http steps can keep a redirect to check it (`follow_redirects: false`), and a cookie jar carries cookies
// between the http steps of one run attempt (redirect hops included), never into another run or attempt.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { startTestServer, type TestServer } from "./helpers/server";
import { projectWithEnv, runToEnd } from "./helpers/runs";

let s: TestServer;
let target: Server<undefined>;
let project: string;
const flaky = new Map<string, number>();

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const u = new URL(req.url);
      const cookie = req.headers.get("cookie");
      switch (u.pathname) {
        case "/moved":
          return new Response(null, { status: 301, headers: { location: "/new", "set-cookie": "seen_moved=1; Path=/" } });
        case "/login":
          // The session cookie arrives on the redirect hop, not on the page it leads to.
          return new Response(null, {
            status: 302,
            headers: { location: "/home", "set-cookie": `session=${u.searchParams.get("user") ?? "ann"}; Path=/; HttpOnly` },
          });
        case "/logout":
          return new Response(null, { status: 204, headers: { "set-cookie": "session=; Path=/; Max-Age=0" } });
        case "/api/prefs":
          return new Response(null, { status: 204, headers: { "set-cookie": "theme=dark; Path=/api" } });
        case "/flaky": {
          const key = u.searchParams.get("key") ?? "";
          const n = (flaky.get(key) ?? 0) + 1;
          flaky.set(key, n);
          return Response.json({ call: n }, { status: n === 1 ? 500 : 200 });
        }
        default:
          return Response.json({ path: u.pathname, cookie });
      }
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "cookies", { BASE_URL: `http://127.0.0.1:${target.port}` }));
});
afterAll(async () => {
  await s.stop();
  await target.stop(true);
});

const http = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `c-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps,
  ...extra,
});

describe("follow_redirects", () => {
  test("false keeps the 301 itself, so its status and location can be checked", async () => {
    const run = await runToEnd(
      s,
      project,
      http([{ request: { url: "/moved", follow_redirects: false }, expect: [{ status: 301 }, { header: "location", equals: "/new" }] }]),
    );
    expect(run.steps[0]?.message).toBeNull();
    expect(run.status).toBe("passed");
    expect(run.steps[0]?.response?.status).toBe(301);
  });

  test("by default the redirect is followed", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "/moved" }, expect: [{ status: 200 }, { json: "$.path", equals: "/new" }] }]));
    expect(run.steps[0]?.message).toBeNull();
    expect(run.status).toBe("passed");
  });

  test("it must be a boolean", async () => {
    const res = await s.call("POST", `/projects/${project}/automations`, http([{ request: { url: "/moved", follow_redirects: "no" } }]));
    expect(res.status).toBe(400);
    expect((await res.json()).details[0].path).toBe("body.steps.0.request.follow_redirects");
  });
});

describe("the cookie jar", () => {
  test("a cookie set on a redirect hop is sent on later steps, by path, beside a cookie header the step writes", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: "/login?user=ann" },
          expect: [
            { json: "$.path", equals: "/home" },
            { json: "$.cookie", equals: "session=ann" },
          ],
        },
        { request: { url: "/api/prefs" } },
        { request: { url: "/api/me" }, expect: [{ json: "$.cookie", equals: "theme=dark; session=ann" }] },
        { request: { url: "/me" }, expect: [{ json: "$.cookie", equals: "session=ann" }] },
        { request: { url: "/me", headers: { cookie: "mine=1" } }, expect: [{ json: "$.cookie", equals: "mine=1; session=ann" }] },
        { request: { url: "/moved", follow_redirects: false } },
        { request: { url: "/me" }, expect: [{ json: "$.cookie", equals: "session=ann; seen_moved=1" }] },
      ]),
    );
    expect(run.steps.map((x) => x.message)).toEqual([null, null, null, null, null, null, null]);
    expect(run.status).toBe("passed");
    // The result shows the cookie header that was sent.
    expect(run.steps[3]?.request?.headers?.cookie).toBe("session=ann");
  });

  test("an expired cookie is dropped", async () => {
    const run = await runToEnd(
      s,
      project,
      http([
        { request: { url: "/login" } },
        { request: { url: "/me" }, expect: [{ json: "$.cookie", equals: "session=ann" }] },
        { request: { url: "/logout" } },
        { request: { url: "/me" }, expect: [{ json: "$.cookie", equals: null }] },
      ]),
    );
    expect(run.steps.map((x) => x.message)).toEqual([null, null, null, null]);
  });

  test("another run starts with an empty jar", async () => {
    const first = await runToEnd(
      s,
      project,
      http([{ request: { url: "/login?user=bob" } }, { request: { url: "/me" }, expect: [{ json: "$.cookie", equals: "session=bob" }] }]),
    );
    expect(first.status).toBe("passed");
    const second = await runToEnd(s, project, http([{ request: { url: "/me" }, expect: [{ json: "$.cookie", equals: null }] }]));
    expect(second.steps[0]?.message).toBeNull();
    expect(second.status).toBe("passed");
  });

  test("a retried attempt starts with an empty jar", async () => {
    const key = crypto.randomUUID();
    const run = await runToEnd(
      s,
      project,
      http(
        [
          { request: { url: "/me" }, expect: [{ json: "$.cookie", equals: null }] },
          { request: { url: "/login?user=cy" } },
          { request: { url: "/me" }, expect: [{ json: "$.cookie", equals: "session=cy" }] },
          { request: { url: `/flaky?key=${key}` }, expect: [{ status: 200 }] },
        ],
        { retries: 1 },
      ),
    );
    expect(run.attempts.map((a) => a.status)).toEqual(["failed", "passed"]);
    expect(run.status).toBe("passed");
  });
});
