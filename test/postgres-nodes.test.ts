// Three nodes on one PostgreSQL database, as behind a load balancer without sticky sessions: a workspace's budget
// admits exactly its number across the nodes, sign-in failures count across them, a session and an idempotency key
// made on one node hold on another, and /mcp answers a client whose requests land on different nodes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { measureRevocations } from "../bench/nodes-revocation";
import { migrations } from "../src/db/migrations";
import { type RunningServer, startServer } from "../src/server";
import { VERSION } from "../src/version";
import { sourceCli } from "./helpers/cli-source";
import { freshDatabaseUrl } from "./helpers/postgres";
import { runSql, startTestServer, type TestServer, tempDir } from "./helpers/server";

const BUDGET = 300;
/** Per address, above what one test sends from its own address (behind the trusted proxy, X-Forwarded-For). */
const IP_BUDGET = 650;
const dirs: string[] = [];
let url = "";
let a: TestServer;
let others: RunningServer[] = [];
let nodes: string[] = [];

/** The same configuration as node A's: the database, its secrets key, a workspace budget of 300 an hour, 650 per address, behind a proxy. */
async function node(): Promise<RunningServer> {
  const dir = tempDir("svc-pg-nodes-");
  dirs.push(dir);
  const flags = {
    port: 0,
    data_dir: dir,
    log_level: "warn",
    trust_proxy: true,
    "database.url": url,
    "rate_limit.per_workspace_per_hour": BUDGET,
    "rate_limit.per_ip_per_hour": IP_BUDGET,
    // Every node of one database shares the secrets key: node A's.
    "secrets.key_file": join(a.dataDir, "secrets.key"),
  };
  return startServer(loadConfig({ env: {}, flags }));
}

beforeAll(async () => {
  url = await freshDatabaseUrl();
  a = await startTestServer({ database: { url }, trust_proxy: true, rate_limit: { per_workspace_per_hour: BUDGET, per_ip_per_hour: IP_BUDGET } });
  others = [await node(), await node()];
  nodes = [a.url, ...others.map((o) => o.url)];
}, 60_000);

afterAll(async () => {
  await Promise.all(others.map((o) => o.stop()));
  await a.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const get = (base: string, path: string, key: string, from = "10.0.0.1") =>
  fetch(`${base}/api/v1/ops${path}`, { headers: { authorization: `Bearer ${key}`, "x-forwarded-for": from } });

describe("three nodes on one PostgreSQL database", () => {
  test("a workspace budget of 300/h admits exactly 300 of 600 requests spread over the nodes (plus what refills meanwhile)", async () => {
    const { key } = await a.userWithKey("budget@acme.test", "budget");
    const statuses: number[] = [];
    const refused: Response[] = [];
    const started = performance.now();
    // 600 reads, round-robin over the nodes, 30 in flight at a time.
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => get(nodes[(batch * 30 + i) % 3] as string, "/projects", key)));
      for (const r of answers) {
        statuses.push(r.status);
        if (r.status === 429) refused.push(r);
        else await r.arrayBuffer();
      }
    }
    const elapsedMs = performance.now() - started;
    // The bucket starts full (300) at the first request and refills 300 tokens an hour from then on.
    const refill = Math.floor((elapsedMs * BUDGET) / 3_600_000);
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.length).toBe(600);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(admitted).toBeGreaterThanOrEqual(BUDGET);
    expect(admitted).toBeLessThanOrEqual(BUDGET + refill);
    // A refusal looks the same on every node as on one SQLite node: the error shape, Retry-After, the budget's headers.
    const last = refused.at(-1) as Response;
    expect(await last.json()).toEqual({ error: "rate_limited", message: expect.stringContaining("the workspace's request budget (300/h) is used up") });
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(last.headers.get("ratelimit-limit")).toBe("300");
    expect(last.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(last.headers.get("ratelimit-reset"))).toBeGreaterThan(3000);
  });

  test("the per-address budget is shared too, and counted before the key is read: 650 of 700 invalid keys get 401, the rest 429", async () => {
    const statuses: number[] = [];
    const started = performance.now();
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 35 }, (_, i) => get(nodes[(batch * 35 + i) % 3] as string, "/projects", `svc_invalid${batch}x${i}`, "10.0.0.2")),
      );
      for (const r of answers) {
        statuses.push(r.status);
        await r.arrayBuffer();
      }
    }
    const refill = Math.floor(((performance.now() - started) * IP_BUDGET) / 3_600_000);
    const unauthorized = statuses.filter((s) => s === 401).length;
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(unauthorized).toBeGreaterThanOrEqual(IP_BUDGET);
    expect(unauthorized).toBeLessThanOrEqual(IP_BUDGET + refill);
  });

  test("sign-in failures count across the nodes: the 11th wrong password from one address is refused on any node", async () => {
    await a.userWithKey("guessed@acme.test", "acme", "member");
    const login = (base: string) =>
      fetch(`${base}/api/v1/web/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "guessed@acme.test", password: "wrong password" }),
      });
    for (let i = 0; i < 10; i++) expect((await login(nodes[i % 3] as string)).status).toBe(401);
    for (const base of nodes) {
      const res = await login(base);
      expect(res.status).toBe(429);
      expect((await res.json()).error).toBe("rate_limited");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
  });

  test("a session signed in on node A works on node B", async () => {
    const signIn = await fetch(`${nodes[0]}/api/v1/web/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "owner@acme.test", password: "correct horse battery" }),
    });
    expect(signIn.status).toBe(200);
    const cookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0] as string;
    expect(cookie).toStartWith("svc_session=");
    const state = await (await fetch(`${nodes[1]}/api/v1/web/session`, { headers: { cookie } })).json();
    expect(state.signed_in).toBe(true);
    expect(state.user.email).toBe("owner@acme.test");
    expect((await fetch(`${nodes[2]}/api/v1/ops/projects`, { headers: { cookie } })).status).toBe(200);
  });

  test("an Idempotency-Key replayed on another node answers the first response and starts nothing more", async () => {
    const post = async (base: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}/api/v1/ops${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${a.key}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      });
    expect((await post(nodes[0] as string, "/projects", { name: "Idem", slug: "idem" })).status).toBe(201);
    const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
    const auto = await (await post(nodes[0] as string, "/projects/idem/automations", { name: "one", kind: "http", steps })).json();
    const group = await (await post(nodes[1] as string, "/projects/idem/groups", { name: "all", automation_ids: [auto.id] })).json();
    const first = await post(nodes[1] as string, `/projects/idem/groups/${group.id}/run`, {}, { "idempotency-key": "nightly-1" });
    expect(first.status).toBe(202);
    const firstBody = await first.json();
    const again = await post(nodes[2] as string, `/projects/idem/groups/${group.id}/run`, {}, { "idempotency-key": "nightly-1" });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(firstBody);
    const [row] = await a.sql<{ n: number }>("SELECT COUNT(*) AS n FROM group_runs WHERE group_id = ?", group.id);
    expect(row?.n).toBe(1);
  });

  test("/mcp behind a load balancer without sticky sessions: initialize on node A, tools/list and tools/call on node B", async () => {
    const mcp = (base: string, body: unknown) =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${a.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(body),
      });
    const init = await mcp(nodes[0] as string, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "lb-test", version: "1" } },
    });
    expect(init.status).toBe(200);
    expect((await init.json()).result.serverInfo.name).toBeString();
    // Stateless: no session id is handed out, so there is nothing a node would have to know of another.
    expect(init.headers.get("mcp-session-id")).toBeNull();
    expect((await mcp(nodes[1] as string, { jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
    const list = await (await mcp(nodes[1] as string, { jsonrpc: "2.0", id: 2, method: "tools/list" })).json();
    const names = (list.result.tools as { name: string }[]).map((t) => t.name);
    expect(names).toContain("list_projects");
    const called = await (
      await mcp(nodes[1] as string, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_projects", arguments: {} } })
    ).json();
    expect(called.result.isError ?? false).toBe(false);
    expect(JSON.stringify(called.result.content)).toContain("list_projects: ");
  });
});

describe("one secrets key for all nodes", () => {
  test("the first node keeps a check of its key; a node with another key, or none, refuses to start naming secrets.key_file and changes nothing", async () => {
    const db = await freshDatabaseUrl();
    const keys = tempDir("svc-pg-keys-");
    dirs.push(keys);
    const keyA = join(keys, "a.key");
    const first = await startTestServer({ database: { url: db }, secrets: { key_file: keyA } });
    const clis: ReturnType<typeof sourceCli>[] = [];
    try {
      expect(statSync(keyA).mode & 0o777).toBe(0o600);
      const checks = () => runSql<{ name: string; value: string }>(db, keys, "SELECT name, value FROM instance_settings", []);
      const kept = await checks();
      expect(kept.map((r) => r.name)).toEqual(["secrets_key_check"]);
      expect(JSON.stringify(kept)).not.toContain(readFileSync(keyA, "utf8").trim());

      const serve = (keyFile: string) => {
        const dataDir = tempDir("svc-pg-keynode-");
        dirs.push(dataDir);
        const env = { SVC_DATABASE_URL: db, SVC_SECRETS_KEY_FILE: keyFile, SVC_PORT: "0", SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: "warn" };
        const cli = sourceCli(env);
        clis.push(cli);
        return cli.run(["serve"]);
      };
      // Another key: refused, and its file left as it was.
      const keyB = join(keys, "b.key");
      writeFileSync(keyB, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
      const before = readFileSync(keyB, "utf8");
      const other = await serve(keyB);
      expect(other.code).toBe(1);
      expect(other.stderr).toContain(`the secrets key ${keyB} is not the key the other nodes of this database use`);
      expect(other.stderr).toContain("secrets.key_file (SVC_SECRETS_KEY_FILE)");
      expect(readFileSync(keyB, "utf8")).toBe(before);
      // No key file at all: refused, and none created.
      const missing = join(keys, "missing.key");
      const none = await serve(missing);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain(`the secrets key ${missing} does not exist, but other nodes of this database already use a key`);
      expect(none.stderr).toContain("secrets.key_file (SVC_SECRETS_KEY_FILE)");
      expect(existsSync(missing)).toBe(false);
      expect(await checks()).toEqual(kept);

      // A copy of the first node's key: the node starts and reads what the first one sealed.
      const env = await first.call("POST", "/projects", { name: "Keys" });
      expect(env.status).toBe(201);
      const made = await first.call("POST", "/projects/keys/environments", { name: "prod", variables: {}, secrets: { TOKEN: "s3cret-value-1" } });
      expect(made.status).toBe(201);
      const copy = join(keys, "copy.key");
      copyFileSync(keyA, copy);
      const second = await startServer(
        loadConfig({ env: {}, flags: { port: 0, data_dir: tempDir("svc-pg-keynode-"), log_level: "warn", "database.url": db, "secrets.key_file": copy } }),
      );
      try {
        const read = await fetch(`${second.url}/api/v1/ops/projects/keys/environments/prod`, { headers: { authorization: `Bearer ${first.key}` } });
        expect(read.status).toBe(200);
        expect((await read.json()).secret_names).toEqual(["TOKEN"]);
      } finally {
        await second.stop();
      }
    } finally {
      for (const c of clis) c.remove();
      await first.stop();
    }
  }, 60_000);
});

describe("upgrades", () => {
  test("a node older than the database's schema refuses to start, naming both versions, and changes nothing", async () => {
    const db = await freshDatabaseUrl();
    const newer = await startTestServer({ database: { url: db } });
    expect((await newer.call("POST", "/projects", { name: "Kept" })).status).toBe(201);
    await newer.stop();
    // What a newer svc leaves: a migration this build does not know.
    await runSql(db, "", "INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_from_a_newer_svc', '2030-01-01T00:00:00.000Z')", []);
    const snapshot = () => runSql<{ name: string }>(db, "", "SELECT name FROM kysely_migration ORDER BY name", []);
    const before = await snapshot();
    const newest = Object.keys(migrations).sort().at(-1) as string;
    const dataDir = tempDir("svc-pg-old-node-");
    dirs.push(dataDir);
    let refused: Error | null = null;
    await startServer(loadConfig({ env: {}, flags: { port: 0, data_dir: dataDir, log_level: "silent", "database.url": db } })).then(
      (s) => s.stop(),
      (e: Error) => {
        refused = e;
      },
    );
    expect(String(refused)).toContain("was written by a newer version of svc: its schema is at 9999_from_a_newer_svc");
    expect(String(refused)).toContain(`this svc ${VERSION} knows schemas up to ${newest}`);
    expect(String(refused)).toContain("stop all nodes, upgrade each, then start them");
    expect(await snapshot()).toEqual(before);
    expect(await runSql<{ name: string }>(db, "", "SELECT name FROM projects", [])).toEqual([{ name: "Kept" }]);
  }, 60_000);
});

describe("revocation across nodes", () => {
  test("a key revoked on node A is refused on node B within 1 s (median of 20, bench/nodes-revocation.ts)", async () => {
    const { delaysMs, medianMs } = await measureRevocations(await freshDatabaseUrl(), 20);
    expect(delaysMs.length).toBe(20);
    expect(medianMs).toBeLessThan(1000);
  }, 60_000);
});
