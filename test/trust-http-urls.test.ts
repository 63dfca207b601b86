// An http step reaches only http(s) targets: file:, data: and other schemes are refused when saved, again at run
// time after {{…}} and BASE_URL, and on every redirect, which svc follows itself with fetch's method rules.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { startTestServer, type TestServer } from "./helpers/server";
import { json, projectWithEnv, runToEnd } from "./helpers/runs";

let s: TestServer;
let target: Server<undefined>;
let targetUrl: string;
let project: string;
const seen: { method: string; path: string; body: string; headers: Record<string, string> }[] = [];

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      const body = await req.text();
      seen.push({ method: req.method, path: u.pathname + u.search, body, headers: Object.fromEntries(req.headers) });
      // /to?code=302&location=… answers a redirect to wherever the test says.
      if (u.pathname === "/to") {
        return new Response(null, { status: Number(u.searchParams.get("code") ?? "302"), headers: { location: u.searchParams.get("location") ?? "/" } });
      }
      if (u.pathname.startsWith("/loop/")) return new Response(null, { status: 302, headers: { location: `/loop/${Number(u.pathname.slice(6)) + 1}` } });
      return Response.json({ method: req.method, path: u.pathname, body, type: req.headers.get("content-type"), auth: req.headers.get("authorization") });
    },
  });
  targetUrl = `http://127.0.0.1:${target.port}`;
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "urls", { BASE_URL: targetUrl, PASSWD: "file:///etc/passwd" }));
});
afterAll(async () => {
  await s.stop();
  await target.stop(true);
});

const http = (steps: unknown[]) => ({ name: `u-${crypto.randomUUID().slice(0, 8)}`, kind: "http", environment: "test", steps });

describe("a step's own URL", () => {
  test("file:, FILE:, data: and other schemes are refused when saved, naming the step's url", async () => {
    for (const url of [
      "file:///etc/passwd",
      "FILE:///etc/passwd",
      " file:///etc/passwd",
      "fi\tle:///etc/passwd",
      "\nfile:///etc/passwd",
      "data:text/plain,hi",
      "chrome://settings",
      "view-source:http://x.test/",
      "ftp://x.test/",
    ]) {
      const res = await s.call("POST", `/projects/${project}/automations`, http([{ request: { url: "/ok" } }, { request: { url } }]));
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      const body = await res.json();
      expect(body.error).toBe("invalid_request");
      expect(body.details).toEqual([{ path: "body.steps.1.request.url", message: expect.stringContaining("only http and https URLs can be requested") }]);
    }
    for (const url of ["https://example.test/x", "HTTP://127.0.0.1/x", "/relative", "{{BASE_URL}}/x"]) {
      const res = await s.call("POST", `/projects/${project}/automations`, http([{ request: { url } }]));
      expect({ url, status: res.status }).toEqual({ url, status: 201 });
    }
  });

  test("a refused update changes nothing", async () => {
    const made = await json<{ id: string; steps: unknown[] }>(
      await s.call("POST", `/projects/${project}/automations`, http([{ request: { url: "/ok" } }])),
      201,
    );
    const res = await s.call("PATCH", `/projects/${project}/automations/${made.id}`, { steps: [{ request: { url: "file:///etc/passwd" } }] });
    expect(res.status).toBe(400);
    expect((await res.json()).details[0].path).toBe("body.steps.0.request.url");
    const after = await json<{ steps: unknown[] }>(await s.call("GET", `/projects/${project}/automations/${made.id}`));
    expect(after.steps).toEqual(made.steps);
  });

  test("a file: URL that a variable fills in is refused at run time, and nothing is read", async () => {
    const run = await runToEnd(s, project, http([{ request: { url: "{{PASSWD}}" }, expect: [{ body: { contains: "root" } }] }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.status).toBe("error");
    expect(run.steps[0]?.message).toBe('svc will not request file:///etc/passwd: "file:" URLs are refused: only http and https URLs can be requested');
    expect(run.steps[0]?.response).toBeUndefined();
  });

  test("a BASE_URL of file:/// does not make relative URLs read files", async () => {
    const { project: files } = await projectWithEnv(s, "file base", { BASE_URL: "FILE:///" });
    const run = await runToEnd(s, files, http([{ request: { url: "/etc/passwd" } }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toContain('"file:" URLs are refused');
    expect(run.steps[0]?.response).toBeUndefined();
  });
});

describe("redirects", () => {
  test("a redirect to file:, data:, chrome: or view-source: is blocked and the step says why", async () => {
    for (const location of ["file:///etc/passwd", "FILE:///etc/passwd", "data:text/plain,root:x:0:0", "chrome://version", "view-source:http://127.0.0.1/"]) {
      const run = await runToEnd(s, project, http([{ request: { url: `/to?location=${encodeURIComponent(location)}` }, expect: [{ status: 200 }] }]));
      expect({ location, status: run.status }).toEqual({ location, status: "error" });
      expect(run.steps[0]?.message).toStartWith("the response redirected to ");
      expect(run.steps[0]?.message).toContain("which svc will not follow");
      expect(run.steps[0]?.message).toContain("only http and https URLs can be requested");
      expect(JSON.stringify(run)).not.toContain("root:x:0:0:root");
    }
  });

  test("http redirects are followed: 303 becomes GET, 301/302 turn a POST into a GET, 307/308 keep method and body", async () => {
    const cases: [number, string, string, string][] = [
      [303, "POST", "GET", ""],
      [303, "PUT", "GET", ""],
      [301, "POST", "GET", ""],
      [302, "POST", "GET", ""],
      [302, "PUT", "PUT", '{"n":1}'],
      [307, "POST", "POST", '{"n":1}'],
      [308, "PATCH", "PATCH", '{"n":1}'],
    ];
    for (const [code, method, after, body] of cases) {
      const run = await runToEnd(
        s,
        project,
        http([
          {
            request: { method, url: `/to?code=${code}&location=${encodeURIComponent("/landed")}`, json: { n: 1 } },
            expect: [{ status: 200 }, { json: "$.path", equals: "/landed" }, { json: "$.method", equals: after }, { json: "$.body", equals: body }],
          },
        ]),
      );
      expect({ code, method, message: run.steps[0]?.message }).toEqual({ code, method, message: null });
      // The body's content-type goes with the body.
      const landed = seen.filter((r) => r.path === "/landed").at(-1);
      expect(landed?.headers["content-type"]).toBe(body ? "application/json" : undefined);
    }
  });

  test("the Authorization header is not carried to another origin", async () => {
    const other = `http://localhost:${target.port}/landed`;
    const run = await runToEnd(
      s,
      project,
      http([
        {
          request: { url: `/to?location=${encodeURIComponent("/landed")}`, headers: { authorization: "Bearer same" } },
          expect: [{ json: "$.auth", equals: "Bearer same" }],
        },
        {
          request: { url: `/to?location=${encodeURIComponent(other)}`, headers: { authorization: "Bearer same" } },
          expect: [{ json: "$.auth", equals: null }],
        },
      ]),
    );
    expect(run.steps.map((x) => x.message)).toEqual([null, null]);
    expect(run.status).toBe("passed");
  });

  test("a redirect loop ends after 20 hops with an error saying so", async () => {
    const before = seen.length;
    const run = await runToEnd(s, project, http([{ request: { url: "/loop/0" } }]));
    expect(run.status).toBe("error");
    expect(run.steps[0]?.message).toContain("redirected more than 20 times");
    expect(seen.length - before).toBe(21);
  });
});
