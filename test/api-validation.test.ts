// Bad input is a clear error in the JSON shape and changes nothing; state rules give 409; pages and replays.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let automationId: string;
const httpSteps = [{ request: { url: "http://127.0.0.1:9/x" }, expect: [{ status: 200 }] }];

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false }, max_body_bytes: 4096 });
  await s.call("POST", "/projects", { name: "Shop", slug: "shop" });
  automationId = (await (await s.call("POST", "/projects/shop/automations", { name: "a", kind: "http", steps: httpSteps })).json()).id;
});
afterAll(() => s.stop());

async function snapshot() {
  const db = s.server.core.db;
  const tables = ["projects", "automations", "features", "environments", "groups", "runs"] as const;
  const out: Record<string, number> = {};
  for (const t of tables)
    out[t] = Number(
      (
        await db
          .selectFrom(t)
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return out;
}

describe("400 invalid_request with details, nothing changed", () => {
  const cases: [string, string, string, unknown, string][] = [
    ["missing name", "POST", "/projects", {}, "body.name"],
    ["name of the wrong type", "POST", "/projects", { name: 42 }, "body.name"],
    ["an unknown field", "POST", "/projects", { name: "x", colour: "red" }, "body"],
    ["a bad slug", "POST", "/projects", { name: "x", slug: "Not A Slug" }, "body.slug"],
    ["an empty step list", "POST", "/projects/shop/automations", { name: "a", kind: "http", steps: [] }, "body.steps"],
    ["an unknown kind", "POST", "/projects/shop/automations", { name: "a", kind: "ftp", steps: httpSteps }, "body.kind"],
    ["a browser step in an http automation", "POST", "/projects/shop/automations", { name: "a", kind: "http", steps: [{ goto: "/" }] }, "body.steps.0"],
    [
      "an assertion without operator",
      "POST",
      "/projects/shop/automations",
      { name: "a", kind: "http", steps: [{ request: { url: "/x" }, expect: [{ json: "$.id" }] }] },
      "body.steps.0",
    ],
    ["a negative retry count", "PATCH", `/projects/shop/automations/AUT`, { retries: -1 }, "body.retries"],
    ["an unknown environment", "POST", `/projects/shop/automations/AUT/run`, { environment: "nope" }, "environment"],
    ["a feature target of unknown kind", "POST", "/projects/shop/features", { name: "f", target: { kind: "ftp" } }, "body.target"],
    ["an invalid member role", "POST", "/members", { email: "x@y.z", role: "god" }, "body.role"],
    ["an invalid email", "POST", "/members", { email: "not-an-email" }, "body.email"],
    ["a body that is an array", "POST", "/projects", [1, 2], "body"],
  ];
  for (const [name, method, path, body, detailPath] of cases) {
    test(name, async () => {
      const before = await snapshot();
      const res = await s.call(method, path.replace("AUT", automationId), body);
      expect(res.status).toBe(400);
      const json = await res.json();
      expect(json.error).toBe("invalid_request");
      expect(typeof json.message).toBe("string");
      expect(json.details.some((d: { path: string }) => d.path.startsWith(detailPath))).toBe(true);
      expect(await snapshot()).toEqual(before);
    });
  }

  test("a bad query: limit out of range or not a number, a forged cursor", async () => {
    for (const q of ["limit=0", "limit=201", "limit=abc", "cursor=not-a-cursor", "status=bogus"]) {
      const res = await s.call("GET", `/projects/shop/runs?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
      expect((await res.json()).error).toBe("invalid_request");
    }
    // A forged cursor is named as every query parameter is; one carrying what svc never writes (a NUL, which
    // PostgreSQL's text refuses) is the same 400, not a 500.
    const forged = Buffer.from(JSON.stringify({ t: "2026-01-01T00:00:00.000Z\u0000", id: "run_x" })).toString("base64url");
    for (const cursor of ["not-a-cursor", forged]) {
      const refused = await s.call("GET", `/projects/shop/runs?cursor=${cursor}`);
      expect({ cursor, status: refused.status }).toEqual({ cursor, status: 400 });
      expect(((await refused.json()) as { details: unknown }).details).toEqual([{ path: "query.cursor", message: "invalid cursor" }]);
    }
    // A word where a number goes is named as such, not as the NaN it was coerced to.
    const res = await s.call("GET", "/projects/shop/runs?limit=abc");
    const body = (await res.json()) as { message: string; details: { path: string; message: string }[] };
    expect(body.details).toEqual([{ path: "query.limit", message: "expected a number" }]);
    expect(body.message).not.toContain("NaN");
    // Bounds and whole numbers in words, not zod's "Too small: expected number to be >=1".
    const bounds: [string, string][] = [
      ["limit=0", "must be at least 1"],
      ["limit=201", "must be at most 200"],
      ["limit=1.5", "expected a whole number"],
      // Only digits: what JavaScript would also take for a number is refused as the docs say.
      ["limit=1e1", "expected a number"],
      ["limit=0x5", "expected a number"],
      ["limit=", "expected a number"],
      ["limit=%205", "expected a number"],
    ];
    for (const [q, message] of bounds) {
      const bad = (await (await s.call("GET", `/projects/shop/runs?${q}`)).json()) as { details: { path: string; message: string }[] };
      expect({ q, details: bad.details }).toEqual({ q, details: [{ path: "query.limit", message }] });
    }
  });

  test("a string that is not Unicode text (half of a surrogate pair, alone) is refused naming where; a whole pair is text", async () => {
    const before = await snapshot();
    for (const [body, path] of [
      ['{"name":"x\\ud800y"}', "body.name"],
      ['{"name":"ok","description":"\\udc00"}', "body.description"],
    ] as const) {
      const res = await s.call("POST", "/projects", body);
      const err = (await res.json()) as { error: string; details: { path: string }[] };
      expect({ body, status: res.status, error: err.error, path: err.details[0]?.path }).toEqual({ body, status: 400, error: "invalid_request", path });
    }
    expect(await snapshot()).toEqual(before);
    const pair = await s.call("POST", "/projects", '{"name":"smile \\ud83d\\ude00"}');
    expect(pair.status).toBe(201);
    const created = (await pair.json()) as { slug: string; name: string };
    expect(created.name).toBe("smile \u{1F600}");
    expect(((await (await s.call("GET", `/projects/${created.slug}`)).json()) as { name: string }).name).toBe("smile \u{1F600}");
    expect((await s.call("DELETE", `/projects/${created.slug}`)).status).toBe(204);
  });

  test("a key named __proto__ in a body or a query map is refused, not silently dropped", async () => {
    const before = await snapshot();
    for (const body of ['{"metadata":{"__proto__":"x","branch":"main"}}', '{"variables":{"__proto__":"x"}}', '{"variables":{"\\u005f_proto__":"x"}}']) {
      const res = await s.call("POST", `/projects/shop/automations/${automationId}/run`, body);
      const err = (await res.json()) as { error: string; details: { path: string }[] };
      expect({ body, status: res.status, error: err.error }).toEqual({ body, status: 400, error: "invalid_request" });
      expect(err.details[0]?.path).toMatch(/^body\.(metadata|variables)\.__proto__$/);
    }
    expect(await snapshot()).toEqual(before);
    // As a filter it matched every run; now it says why it cannot be one.
    const filter = await s.call("GET", "/projects/shop/runs?metadata.__proto__=x");
    expect(filter.status).toBe(400);
    expect(((await filter.json()) as { details: { path: string }[] }).details[0]?.path).toBe("query.metadata.__proto__");
  });

  test("malformed JSON", async () => {
    const res = await s.call("POST", "/projects", '{"name": "x",');
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain("not valid JSON");
  });
});

describe("query parameters an operation does not take", () => {
  test("are a 400 naming each, never ignored (a misspelt filter would answer the unfiltered list)", async () => {
    expect(
      (await s.call("POST", "/projects/shop/alert-channels", { name: "hook", kind: "webhook", url: "https://hooks.example.test/h", secret: "hook-secret" }))
        .status,
    ).toBe(201);
    for (const [path, names, expected] of [
      ["/projects/shop/automations?statuss=failed", ["statuss"], "expected one of"],
      ["/projects/shop/alert-channels/hook/deliveries?status=failed", ["status"], "expected one of"],
      ["/projects/shop/runs?bogus=1&other=2", ["bogus", "other"], "expected one of"],
      ["/me?x=1", ["x"], "takes none"],
    ] as const) {
      const res = await s.call("GET", path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      const body = (await res.json()) as { error: string; message: string; details: { path: string }[] };
      expect(body.error).toBe("invalid_request");
      expect(body.message).toContain(expected);
      expect(body.details.map((d) => d.path)).toEqual(names.map((n) => `query.${n}`));
    }
    // What an operation takes still works, maps (metadata.KEY) and repeated lists included.
    expect((await s.call("GET", "/projects/shop/runs?status=failed&metadata.branch=main&limit=5")).status).toBe(200);
    expect((await s.call("GET", "/projects/shop/automations?tag=a&tag=b")).status).toBe(200);
  });
});

describe("transport errors", () => {
  test("415 for a body that is not JSON", async () => {
    const res = await fetch(`${s.api}/projects`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "text/plain" },
      body: "name=x",
    });
    expect(res.status).toBe(415);
    expect((await res.json()).error).toBe("unsupported_media_type");
  });
  test("413 for a body over the configured limit, and nothing stored", async () => {
    const before = await snapshot();
    const res = await s.call("POST", "/projects", { name: "x", description: "y".repeat(5000) });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe("payload_too_large");
    expect(await snapshot()).toEqual(before);
  });
  test("404 JSON for an unknown route, 405 with Allow for a wrong method", async () => {
    const r404 = await s.call("GET", "/nothing/here");
    expect(r404.status).toBe(404);
    expect((await r404.json()).error).toBe("not_found");
    const r405 = await s.call("PUT", "/projects/shop");
    expect(r405.status).toBe(405);
    expect(r405.headers.get("allow")).toContain("PATCH");
    expect((await r405.json()).error).toBe("method_not_allowed");
  });
});

describe("409 conflict for illegal state changes", () => {
  test("cancelling a run twice: the second is a conflict", async () => {
    // A target that never answers keeps the run queued or running whether or not the run engine is active.
    const hanging = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    const slow = await (
      await s.call("POST", "/projects/shop/automations", {
        name: "slow",
        kind: "http",
        steps: [{ request: { url: `http://127.0.0.1:${hanging.port}/` } }],
      })
    ).json();
    const run = await (await s.call("POST", `/projects/shop/automations/${slow.id}/run`)).json();
    const first = await s.call("POST", `/projects/shop/runs/${run.id}/cancel`);
    expect(first.status).toBe(200);
    expect((await first.json()).status).toBe("cancelled");
    const second = await s.call("POST", `/projects/shop/runs/${run.id}/cancel`);
    expect(second.status).toBe(409);
    expect((await second.json()).error).toBe("conflict");
    hanging.stop(true);
  });
  test("automation status: active cannot go back to draft; disabled cannot run", async () => {
    const bad = await s.call("PATCH", `/projects/shop/automations/${automationId}`, { status: "draft" });
    expect(bad.status).toBe(409);
    expect((await s.call("PATCH", `/projects/shop/automations/${automationId}`, { status: "disabled" })).status).toBe(200);
    const run = await s.call("POST", `/projects/shop/automations/${automationId}/run`);
    expect(run.status).toBe(409);
    expect((await s.call("PATCH", `/projects/shop/automations/${automationId}`, { status: "active" })).status).toBe(200);
  });
  test("a duplicate slug; the last owner", async () => {
    expect((await s.call("POST", "/projects", { name: "Again", slug: "shop" })).status).toBe(409);
    const me = await (await s.call("GET", "/me")).json();
    const res = await s.call("DELETE", `/members/${me.user.id}`);
    expect(res.status).toBe(409);
    expect((await s.call("PATCH", `/members/${me.user.id}`, { role: "member" })).status).toBe(409);
  });
  test("a second generation while one is in progress", async () => {
    // A crawl of a page that never answers keeps the first generation in progress.
    const hanging = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    const f = await (
      await s.call("POST", "/projects/shop/features", { name: "Login", target: { kind: "web", url: `http://127.0.0.1:${hanging.port}/` } })
    ).json();
    expect((await s.call("POST", `/projects/shop/features/${f.id}/generation`, { strategy: "crawl" })).status).toBe(202);
    const second = await s.call("POST", `/projects/shop/features/${f.id}/generation`, {});
    expect(second.status).toBe(409);
    expect((await second.json()).error).toBe("conflict");
    const cancelled = await s.call("DELETE", `/projects/shop/features/${f.id}/generation`);
    expect((await cancelled.json()).status).toBe("cancelled");
    expect((await s.call("DELETE", `/projects/shop/features/${f.id}/generation`)).status).toBe(409);
    hanging.stop(true);
  });
});

describe("pagination and idempotency", () => {
  test("pages of 3 cover every record once, newest first", async () => {
    for (let i = 0; i < 7; i++) await s.call("POST", "/projects/shop/features", { name: `page-${i}` });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/projects/shop/features?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await (await s.call("GET", url)).json();
      expect(page.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.data.map((f: { id: string }) => f.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor && pages < 20);
    const all = await (await s.call("GET", "/projects/shop/features?limit=200")).json();
    expect(seen).toEqual(all.data.map((f: { id: string }) => f.id));
    expect(new Set(seen).size).toBe(seen.length);
    expect(pages).toBe(Math.ceil(all.data.length / 3));
  });

  test("the same Idempotency-Key returns the first run instead of starting another", async () => {
    const path = `/projects/shop/automations/${automationId}/run`;
    const a = await s.call("POST", path, undefined, undefined, { "idempotency-key": "deploy-42" });
    const b = await s.call("POST", path, undefined, undefined, { "idempotency-key": "deploy-42" });
    const c = await s.call("POST", path, undefined, undefined, { "idempotency-key": "deploy-43" });
    const [ra, rb, rc] = [await a.json(), await b.json(), await c.json()];
    expect(ra.id).toBe(rb.id);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(rc.id).not.toBe(ra.id);
    const runs = await (await s.call("GET", `${path}s?limit=200`)).json();
    expect(runs.data.filter((r: { id: string }) => r.id === ra.id).length).toBe(1);
  });
});
