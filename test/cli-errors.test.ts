// The CLI's failures and their exit codes: 401, 403, 404, 400, 409, 429 (retried, then given up), 503 retried, network down.
import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { generateApiKey } from "../src/security/api-keys";
import { type CliSandbox, cliSandbox } from "./helpers/cli";
import { sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";

// Each test spawns the compiled binary several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: CliSandbox;
let proxy: ReturnType<typeof Bun.serve> | null = null;

beforeAll(async () => {
  s = await startTestServer();
  cli = cliSandbox({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "shop" });
  expect((await s.call("POST", "/projects", { name: "Shop" })).status).toBe(201);
  const outsider = await s.userWithKey("owner@globex.test", "globex", "owner");
  expect((await s.call("POST", "/projects", { name: "Globex Secret" }, outsider.key)).status).toBe(201);
});
afterEach(async () => {
  await proxy?.stop(true);
  proxy = null;
});
afterAll(async () => {
  cli.remove();
  await s.stop();
});

/** A proxy in front of the real server that answers the first `n` requests itself. */
function interposer(first: (n: number) => Response | null): { url: string; seen: () => number } {
  let count = 0;
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      count++;
      const own = first(count);
      if (own) return own;
      const url = new URL(req.url);
      return fetch(`${s.url}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body: req.body });
    },
  });
  return { url: `http://127.0.0.1:${proxy.port}`, seen: () => count };
}

const errorBody = (status: number, error: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error, message: `${error} (from the test proxy)` }), { status, headers: { "content-type": "application/json", ...headers } });

test.each([
  ["an unknown key is 401: exit 3", ["projects", "list"], { SVC_API_KEY: generateApiKey().key }, 3, "unauthorized"],
  ["no key at all: exit 3, saying how to get one", ["projects", "list"], { SVC_API_KEY: "" }, 3, "svc login"],
  ["a missing automation is 404: exit 4", ["automations", "show", "aut_doesnotexist"], {}, 4, "not_found"],
  ["an invalid body is 400: exit 2 with the details", ["automations", "create", "--name", "x", "--kind", "http", "--steps", "[]"], {}, 2, "steps"],
  ["another workspace's project is 404", ["automations", "list", "--project", "globex-secret"], {}, 4, "not_found"],
  ["no project anywhere: exit 2", ["runs", "list"], { SVC_PROJECT: "" }, 2, "no project"],
  [
    "a taken slug is a 409 conflict: exit 2 (a usage error, not a failed run)",
    ["projects", "create", "Again", "--slug", "shop"],
    {},
    2,
    'conflict: a project with slug "shop" already exists',
  ],
] as const)("%s", async (_name, args, env, code, text) => {
  const r = await cli.run([...args], { env: { ...env } });
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code, stdout: "" });
  expect(r.stderr).toContain(text);
});

test("not allowed (403: a member deleting a project) is exit 3, and changes nothing", async () => {
  const member = await s.userWithKey("member@acme.test", "acme", "member");
  const r = await cli.run(["projects", "delete", "shop"], { env: { SVC_API_KEY: member.key } });
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 3, stdout: "" });
  expect(r.stderr).toContain("forbidden: only owners and admins can delete projects");
  expect((await s.call("GET", "/projects/shop")).status).toBe(200);
});

test("429 with Retry-After: 0 every time: retried 3 times, saying the real wait, then exit 5", async () => {
  const p = interposer(() => errorBody(429, "rate_limited", { "retry-after": "0" }));
  const started = performance.now();
  const r = await cli.run(["projects", "list"], { env: { SVC_SERVER: p.url } });
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 5, stdout: "" });
  expect(p.seen()).toBe(4);
  const retries = r.stderr.split("\n").filter((l) => l.includes("retrying"));
  expect(retries).toEqual([1, 2, 3].map((n) => `svc: rate limited; retrying in 100 ms (attempt ${n})`));
  expect(r.stderr).toContain("svc: rate_limited: rate_limited (from the test proxy)");
  expect(r.stderr).toContain("the server asks to retry after 0 s");
  expect(performance.now() - started).toBeGreaterThanOrEqual(300);
});

test("a 429 is retried after its Retry-After, then the command succeeds", async () => {
  const p = interposer((n) => (n === 1 ? errorBody(429, "rate_limited", { "retry-after": "1" }) : null));
  const started = performance.now();
  const r = await cli.run(["projects", "list", "--json"], { env: { SVC_SERVER: p.url } });
  expect(r.code).toBe(0);
  expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
  expect(r.stderr).toContain("rate limited; retrying in 1 s");
  expect(JSON.parse(r.stdout).data[0].slug).toBe("shop");
  expect(p.seen()).toBe(2);
});

test("rate limited beyond what is worth waiting for: exit 5 at once, without changing anything", async () => {
  const limited = await startTestServer({ rate_limit: { per_ip_per_hour: 10_000, per_workspace_per_hour: 2 } });
  try {
    const env = { SVC_SERVER: limited.url, SVC_API_KEY: limited.key };
    expect((await cli.run(["projects", "list"], { env })).code).toBe(0);
    expect((await cli.run(["projects", "list"], { env })).code).toBe(0);
    const started = performance.now();
    const r = await cli.run(["projects", "create", "Late"], { env });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 5, stdout: "" });
    expect(r.stderr).toContain("rate_limited");
    expect(r.stderr).toMatch(/retry after \d+ s/);
    expect(performance.now() - started).toBeLessThan(5000);
    const slugs = (await limited.server.core.db.selectFrom("projects").select("slug").execute()).map((p) => p.slug);
    expect(slugs).not.toContain("late");
  } finally {
    await limited.stop();
  }
});

test("503 is retried with backoff; a start is sent with one Idempotency-Key on every attempt", async () => {
  const keys: string[] = [];
  let count = 0;
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      count++;
      if (req.method === "POST") keys.push(req.headers.get("idempotency-key") ?? "");
      if (count <= 2) return errorBody(503, "unavailable");
      const url = new URL(req.url);
      return fetch(`${s.url}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body: await req.text() });
    },
  });
  const aut = await (await s.call("POST", "/projects/shop/automations", { name: "a", kind: "http", steps: [{ request: { url: "/x" } }] })).json();
  const r = await cli.run(["automations", "run", aut.id, "--json"], { env: { SVC_SERVER: `http://127.0.0.1:${proxy.port}` } });
  expect(r.code).toBe(0);
  expect(r.stderr.match(/server unavailable; retrying/g)).toHaveLength(2);
  expect(keys).toHaveLength(3);
  expect(new Set(keys).size).toBe(1);
  expect(JSON.parse(r.stdout).trigger).toBe("cli");
  const runs = await (await s.call("GET", `/projects/shop/automations/${aut.id}/runs`)).json();
  expect(runs.data).toHaveLength(1);
});

test("a server that keeps failing with 500 is exit 6", async () => {
  const p = interposer(() => errorBody(500, "internal_error"));
  const r = await cli.run(["projects", "list"], { env: { SVC_SERVER: p.url } });
  expect(r.code).toBe(6);
  expect(r.stderr).toContain("internal_error");
});

test("an unreachable server is exit 6", async () => {
  const dead = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const url = `http://127.0.0.1:${dead.port}`;
  await dead.stop(true);
  const r = await cli.run(["projects", "create", "Nowhere"], { env: { SVC_SERVER: url } });
  expect(r.code).toBe(6);
  expect(r.stderr).toContain("network_error");
});

/** The CLI from source, pointed at `server` with the owner's key. */
async function fromSource(server: string, args: string[]) {
  const src = sourceCli({ SVC_SERVER: server, SVC_API_KEY: s.key, SVC_PROJECT: "shop" });
  try {
    return await src.run(args);
  } finally {
    src.remove();
  }
}

test("a server address that redirects (http:// to https://) is not followed: exit 2, naming the address to give instead", async () => {
  const p = interposer(() => new Response(null, { status: 301, headers: { location: "https://svc.example.com/api/v1/ops/projects" } }));
  const r = await fromSource(p.url, ["projects", "list"]);
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
  expect(r.stderr).toContain(`svc: invalid_request: ${p.url} answered with a redirect (HTTP 301) to https://svc.example.com;`);
  expect(r.stderr).toContain("give that address as the server (--server, SVC_SERVER or .svc.json)");
  expect(p.seen()).toBe(1);
});

test("a server whose certificate this machine does not trust: one sentence naming the server and the fix, exit 6", async () => {
  const dir = tempDir("svc-cli-tls-");
  try {
    const made = Bun.spawnSync(
      ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"].concat([
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ]),
    );
    expect(made.exitCode).toBe(0);
    proxy = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: Bun.file(join(dir, "cert.pem")), key: Bun.file(join(dir, "key.pem")) },
      fetch: () => new Response("{}"),
    });
    const url = `https://127.0.0.1:${proxy.port}`;
    const r = await fromSource(url, ["projects", "list"]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 6, stdout: "" });
    expect(r.stderr).toStartWith(`svc: network_error: ${url} presents a TLS certificate this machine does not trust`);
    expect(r.stderr).toContain("NODE_EXTRA_CA_CERTS");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a bad --watch-timeout is a usage error (exit 2) even before a key is found, and nothing is sent", async () => {
  const p = interposer(() => new Response("{}"));
  const src = sourceCli({ SVC_SERVER: p.url, SVC_PROJECT: "shop" });
  try {
    const r = await src.run(["run", "--tag", "smoke", "--watch-timeout", "abc"]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
    expect(r.stderr).toContain("--watch-timeout takes a duration");
    expect(p.seen()).toBe(0);
  } finally {
    src.remove();
  }
});
