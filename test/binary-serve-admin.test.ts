// The compiled executable end to end: admin commands on a data directory, `svc serve` from an empty directory,
// request logs with ids, a 500 that names its request id, clean SIGTERM, and clear errors for bad arguments.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./helpers/server";
import { apiClient, runBinary, type ServeProcess, startServe } from "./helpers/binary";

let dir: string;
let serve: ServeProcess;
let key: string;

beforeAll(async () => {
  dir = tempDir("svc-bin-");
  const user = await runBinary(["admin", "create-user", "--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme", "--password-stdin"], {
    cwd: dir,
    stdin: "a long password\n",
  });
  expect(user.code).toBe(0);
  expect(user.stdout).toContain("ops@acme.test");
  const created = await runBinary(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--name", "ci", "--json"], { cwd: dir });
  expect(created.code).toBe(0);
  const parsed = JSON.parse(created.stdout);
  expect(parsed.key).toMatch(/^svc_[0-9A-Za-z]{43}$/);
  expect(parsed.prefix).toBe(parsed.key.slice(0, 12));
  key = parsed.key;
  serve = await startServe([], { cwd: dir });
});
afterAll(async () => {
  if (serve.proc.exitCode === null) await serve.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, k: string | null = key) => fetch(`${serve.url}/api/v1/ops${path}`, { headers: k ? { authorization: `Bearer ${k}` } : {} });

describe("svc serve and svc admin", () => {
  test("serves on the default data directory ./svc-data of an empty working directory", async () => {
    const me = await (await get("/me")).json();
    expect(me.user.email).toBe("ops@acme.test");
    expect(me.key.name).toBe("ci");
    expect(serve.url).toStartWith("http://127.0.0.1:");
  });

  test("logs one JSON line per request with its request id, never the key", async () => {
    const res = await get("/projects");
    const id = res.headers.get("x-request-id");
    expect(id).toStartWith("req_");
    const line = (await serve.logsWith(String(id))).split("\n").find((l) => l.includes(String(id)));
    expect(line).toBeDefined();
    const entry = JSON.parse(String(line));
    expect(entry).toMatchObject({ msg: "request", method: "GET", path: "/api/v1/ops/projects", status: 200, operation: "list_projects" });
    expect(serve.logs()).not.toContain(key);
  });

  test("applied documents are read by the executable's own reader thread: a plan, and a bad file named at its line", async () => {
    const call = apiClient(serve.url, key);
    await call("POST", "/projects", { name: "Applied", slug: "applied" }, 201);
    const automation = { path: "checks/a.yaml", text: 'name: a\nkind: http\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n' };
    const plan = await call<{ changes: { op: string; key: string }[] }>("POST", "/projects/applied/apply", { documents: [automation], dry_run: true });
    expect(plan.changes).toEqual([expect.objectContaining({ op: "create", key: "checks/a.yaml" })]);
    const bad = await call<{ details: { path: string }[] }>(
      "POST",
      "/projects/applied/apply",
      { documents: [automation, { path: "b.yaml", text: "x: 1\nname: [\n" }] },
      400,
    );
    expect(bad.details[0]?.path).toMatch(/^b\.yaml:\d+$/);
    expect(serve.logs()).not.toContain("document reader");
  });

  test("a second svc serve on the same data directory, or on the same port, is refused instead of sharing them", async () => {
    const sameDir = await runBinary(["serve", "--port", "0"], { cwd: dir });
    expect(sameDir.code).toBe(1);
    expect(sameDir.stderr).toContain(`another svc serve (pid ${serve.proc.pid}) is using the data directory`);
    const port = new URL(serve.url).port;
    const samePort = await runBinary(["serve", "--port", port, "--data-dir", "other-data"], { cwd: dir });
    expect(samePort.code).toBe(1);
    expect(samePort.stderr).toContain("the port is already in use");
    // Nor is a restore into the data directory it serves (writes it acknowledged afterwards would be lost).
    expect((await runBinary(["admin", "backup", "--out", "live.sqlite"], { cwd: dir })).code).toBe(0);
    const restore = await runBinary(["admin", "restore", "--from", "live.sqlite", "--data-dir", "svc-data", "--force"], { cwd: dir });
    expect(restore.code).not.toBe(0);
    expect(restore.stderr).toContain(`svc serve (pid ${serve.proc.pid}) is running on svc-data: stop it before restoring`);
    // The first still serves, its note of the data directory in place.
    expect((await get("/me")).status).toBe(200);
  });

  test("a key made by svc admin while the server runs works at once; revoke-key and remove-member stop keys at once", async () => {
    const made = await runBinary(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--json"], { cwd: dir });
    const second = JSON.parse(made.stdout);
    expect((await get("/projects", second.key)).status).toBe(200);
    expect((await runBinary(["admin", "revoke-key", "--id", second.id], { cwd: dir })).code).toBe(0);
    expect((await get("/projects", second.key)).status).toBe(401);

    await runBinary(["admin", "create-user", "--email", "temp@acme.test", "--name", "Temp", "--workspace", "acme", "--role", "member"], { cwd: dir });
    const tempKey = (await runBinary(["admin", "create-key", "--email", "temp@acme.test", "--workspace", "acme"], { cwd: dir })).stdout.trim();
    expect((await get("/projects", tempKey)).status).toBe(200);
    expect((await runBinary(["admin", "remove-member", "--email", "temp@acme.test", "--workspace", "acme"], { cwd: dir })).code).toBe(0);
    expect((await get("/projects", tempKey)).status).toBe(401);
  });

  test("an expiring key from --expires-in", async () => {
    const made = await runBinary(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--expires-in", "30d", "--json"], { cwd: dir });
    const k = JSON.parse(made.stdout);
    const days = (Date.parse(k.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);
  });

  test("an internal error is a 500 with a request id that is also in the log, and no stack trace", async () => {
    const db = new Database(join(dir, "svc-data", "svc.sqlite"));
    db.exec("DROP TABLE idempotency_keys");
    db.close();
    await (
      await fetch(`${serve.url}/api/v1/ops/projects`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: '{"name":"P"}',
      })
    ).text();
    const aut = await fetch(`${serve.url}/api/v1/ops/projects/p/automations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "a", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] }),
    });
    const a = await aut.json();
    const res = await fetch(`${serve.url}/api/v1/ops/projects/p/automations/${a.id}/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "idempotency-key": "k1" },
    });
    expect(res.status).toBe(500);
    const body = await res.json();
    expect(body.error).toBe("internal_error");
    expect(body.request_id).toStartWith("req_");
    expect(JSON.stringify(body)).not.toContain(" at ");
    expect(await serve.logsWith(`"request_id":"${body.request_id}"`)).toContain(`"request_id":"${body.request_id}"`);
  });

  test("SIGTERM drains and exits 0", async () => {
    const code = await serve.stop("SIGTERM");
    expect(code).toBe(0);
  });
});

describe("bad arguments and configuration", () => {
  test("admin with a missing option exits non-zero with a one-line message", async () => {
    const r = await runBinary(["admin", "create-key", "--workspace", "acme"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--email");
    expect(r.stderr.trim().split("\n")).toEqual([`svc: required option '--email <email>' not specified (add --help for usage)`]);
    for (const args of [
      ["admin", "bogus"],
      ["admin", "create-user", "--email", "a@b.c"],
      ["serve", "--port"],
      ["projects", "list", "--no-such-flag"],
    ]) {
      const bad = await runBinary(args, { cwd: dir });
      expect({ args, code: bad.code }).toEqual({ args, code: 2 });
      expect({ args, lines: bad.stderr.trim().split("\n").length }).toEqual({ args, lines: 1 });
    }
    // Pointed at a directory without a database, a command says so instead of making an empty one to look in.
    const elsewhere = await runBinary(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--data-dir", "nowhere"], { cwd: dir });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(`no database at ${join("nowhere", "svc.sqlite")}: check --data-dir or --config`);
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
  });
  test("an invalid role or expiry is refused", async () => {
    const r = await runBinary(["admin", "create-user", "--email", "x@y.z", "--name", "X", "--workspace", "acme", "--role", "king"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n").length).toBe(1);
    expect(r.stderr).toContain("--role");
    for (const expiry of ["soon", "3z", "1", "2001-01-01", "0d"]) {
      const e = await runBinary(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--expires-in", expiry], { cwd: dir });
      expect({ expiry, code: e.code }).toEqual({ expiry, code: 2 });
      expect(e.stderr).toContain("--expires-in");
    }
  });
  test("a bad configuration value stops the server with a message naming the key", async () => {
    const r = await runBinary(["serve"], { cwd: dir, env: { SVC_RATE_LIMIT_PER_IP_PER_HOUR: "lots" } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("rate_limit.per_ip_per_hour");
    const file = join(dir, "bad.toml");
    await Bun.write(file, 'port = "eighty"\n');
    const f = await runBinary(["serve", "--config", file], { cwd: dir });
    expect(f.code).toBe(2);
    expect(f.stderr).toContain("port");
    // A key without its certificate would serve plain HTTP where HTTPS was meant.
    const half = await runBinary(["serve", "--port", "0"], { cwd: dir, env: { SVC_TLS_KEY: join(dir, "key.pem") } });
    expect(half.code).toBe(2);
    expect(half.stderr).toContain("tls.cert and tls.key go together");
    // Files that cannot be read, or are not PEM, are told by the setting that names them.
    const missing = await runBinary(["serve", "--port", "0"], {
      cwd: dir,
      env: { SVC_TLS_CERT: join(dir, "no-cert.pem"), SVC_TLS_KEY: join(dir, "no-key.pem") },
    });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`tls.cert: cannot read ${join(dir, "no-cert.pem")}: ENOENT`);
    await Bun.write(join(dir, "garbage.pem"), "not a certificate\n");
    const garbage = await runBinary(["serve", "--port", "0", "--data-dir", "tls-data"], {
      cwd: dir,
      env: { SVC_TLS_CERT: join(dir, "garbage.pem"), SVC_TLS_KEY: join(dir, "garbage.pem") },
    });
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).toContain("tls.cert and tls.key cannot be used");
  });
});
