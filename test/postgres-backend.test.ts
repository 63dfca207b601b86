// PostgreSQL as the store (database.url / SVC_DATABASE_URL), whatever SVC_TEST_BACKEND says: a server on it,
// `svc admin` against it, two nodes sharing one database, migrations started at once, and run claims from two
// nodes never handing out the same run.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { migrateToPostgres } from "../src/core/admin";
import { insertRuns } from "../src/core/runs/store";
import { openDatabase, type OpenedDatabase } from "../src/db/database";
import { newId } from "../src/security/ids";
import { type RunningServer, startServer } from "../src/server";
import { sourceCli } from "./helpers/cli-source";
import { freshDatabaseUrl } from "./helpers/postgres";
import { startTestServer, tempDir } from "./helpers/server";

const dirs: string[] = [];
const dir = () => {
  const d = tempDir("svc-pg-node-");
  dirs.push(d);
  return d;
};
/** Asks until `done` answers true or `ms` pass; says whether it did (the caller asserts on it). */
async function eventually(done: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() >= until) return false;
    await Bun.sleep(20);
  }
  return true;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A node on the database at `url`; `keyFrom`: the data directory of the node whose secrets key it shares. */
async function node(url: string, keyFrom?: string): Promise<RunningServer> {
  const key = keyFrom ? { "secrets.key_file": join(keyFrom, "secrets.key") } : {};
  return startServer(loadConfig({ env: {}, flags: { port: 0, data_dir: dir(), log_level: "warn", "database.url": url, ...key } }));
}

describe("PostgreSQL backend", () => {
  test("a server on PostgreSQL creates and reads a project, and /readyz names the backend", async () => {
    const url = await freshDatabaseUrl();
    const s = await startTestServer({ database: { url } });
    try {
      const made = await s.call("POST", "/projects", { name: "Shop" });
      expect(made.status).toBe(201);
      const read = await s.call("GET", "/projects/shop");
      expect(read.status).toBe(200);
      expect((await read.json()).name).toBe("Shop");
      const ready = await fetch(`${s.url}/readyz`);
      expect(ready.status).toBe(200);
      expect((await ready.json()).checks.database).toEqual({ ok: true, backend: "postgres" });
    } finally {
      await s.stop();
    }
  });

  test("a node whose data directory does not exist (nothing of its own to keep) is ready", async () => {
    const url = await freshDatabaseUrl();
    const first = await node(url);
    const keyFrom = first.core.config.data_dir;
    const nowhere = join(dir(), "never-made");
    const second = await startServer(
      loadConfig({
        env: {},
        flags: { port: 0, data_dir: nowhere, log_level: "warn", "database.url": url, "secrets.key_file": join(keyFrom, "secrets.key") },
      }),
    );
    try {
      const ready = await fetch(`${second.url}/readyz`);
      expect({ status: ready.status, body: await ready.json() }).toMatchObject({ status: 200, body: { checks: { disk: { ok: true } } } });
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  test("the first node of a database, with no data directory yet, makes it (0700) to keep its new secrets key (0600) in", async () => {
    const url = await freshDatabaseUrl();
    const fresh = join(dir(), "made-at-start");
    // Before, it refused to start: "cannot create the secrets key …: the directory … does not exist".
    const s = await startServer(loadConfig({ env: {}, flags: { port: 0, data_dir: fresh, log_level: "warn", "database.url": url } }));
    try {
      expect(statSync(fresh).mode & 0o777).toBe(0o700);
      expect(statSync(join(fresh, "secrets.key")).mode & 0o777).toBe(0o600);
      expect(existsSync(join(fresh, "svc.sqlite"))).toBe(false);
      expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  test("a database.url that cannot be opened is refused naming it without its password, whether in the user part or a parameter", async () => {
    const fresh = new URL(await freshDatabaseUrl());
    const refusal = async (url: string) => {
      const opened = openDatabase(dir(), { url });
      const e = await opened.then(
        async (o) => {
          await o.close();
          return null;
        },
        (err: unknown) => err as Error,
      );
      return e?.message ?? "opened";
    };
    // No such database: the driver's answer comes back with the URL as it may be shown.
    const missing = `postgres://svc:Hunter2-user-part@${fresh.host}/no_such_database?password=Hunter2-parameter&sslpassword=Hunter2-ssl`;
    const said = await refusal(missing);
    expect(said).toContain("no_such_database");
    expect(said).not.toContain("Hunter2");
    // A password with an unencoded "/" makes the URL unreadable: said so, and how to write it.
    const unreadable = await refusal(`postgres://svc:Hun/ter2@${fresh.host}/svc`);
    expect(unreadable).toContain("percent-encoded");
    expect(unreadable).not.toContain("ter2");
    // So does svc admin migrate-to-postgres, which looks into the target before it opens it.
    const sqliteDir = dir();
    await (await openDatabase(sqliteDir)).close();
    const copying = await migrateToPostgres(sqliteDir, `postgres://svc:Hun/ter2@${fresh.host}/svc`, { busyTimeoutMs: 1000 }).then(
      () => "copied",
      (e: unknown) => (e as Error).message,
    );
    expect(copying).toContain("percent-encode");
    expect(copying).not.toContain("ter2");
  });

  test("svc admin create-user and create-key work against SVC_DATABASE_URL, and a server on it accepts the key", async () => {
    const url = await freshDatabaseUrl();
    const cli = sourceCli({ SVC_DATABASE_URL: url });
    try {
      const user = await cli.run(["admin", "create-user", "--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme"]);
      expect(user.stderr).toBe("");
      expect(user.code).toBe(0);
      const key = await cli.run(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--json"]);
      expect(key.code).toBe(0);
      // backup copies SQLite's file: on PostgreSQL it says how to back up instead.
      const backup = await cli.run(["admin", "backup", "--out", "x.sqlite"]);
      expect(backup.code).toBe(2);
      expect(backup.stderr).toContain("pg_dump");
      const s = await node(url);
      try {
        const me = await fetch(`${s.url}/api/v1/ops/me`, { headers: { authorization: `Bearer ${JSON.parse(key.stdout).key}` } });
        expect(me.status).toBe(200);
        expect((await me.json()).user.email).toBe("ops@acme.test");
      } finally {
        await s.stop();
      }
    } finally {
      cli.remove();
    }
  });

  test("two nodes on one database: a project created on one is read on the other; a key revoked on one is refused on the other", async () => {
    const url = await freshDatabaseUrl();
    const a = await startTestServer({ database: { url } });
    const b = await node(url, a.dataDir);
    try {
      expect((await a.call("POST", "/projects", { name: "Shared" })).status).toBe(201);
      const onB = await fetch(`${b.url}/api/v1/ops/projects/shared`, { headers: { authorization: `Bearer ${a.key}` } });
      expect(onB.status).toBe(200);
      expect((await onB.json()).name).toBe("Shared");

      const other = await a.userWithKey("second@acme.test", "acme", "admin");
      const asOther = () => fetch(`${b.url}/api/v1/ops/projects`, { headers: { authorization: `Bearer ${other.key}` } });
      expect((await asOther()).status).toBe(200); // now cached on node B
      expect((await a.call("DELETE", `/keys/${other.keyId}`, undefined, other.key)).status).toBe(204);
      // Node B hears of the revocation by notification: well within a second; 5 s is the generous bound.
      expect(await eventually(async () => (await asOther()).status === 401, 5_000)).toBe(true);
    } finally {
      await b.stop();
      await a.stop();
    }
  });

  test("nodes starting at once on an empty database migrate it once", async () => {
    const url = await freshDatabaseUrl();
    const opened = await Promise.all([1, 2, 3].map(() => openDatabase(dir(), { url })));
    try {
      const rows = await opened[0]?.db
        .selectFrom("kysely_migration" as never)
        .select("name" as never)
        .execute();
      const names = (rows as { name: string }[]).map((r) => r.name);
      expect(names.length).toBeGreaterThan(0);
      expect(new Set(names).size).toBe(names.length);
      for (const o of opened) {
        expect(o.backend).toBe("postgres");
        expect(await o.probe.missingMigrations()).toEqual([]);
      }
    } finally {
      await Promise.all(opened.map((o) => o.close()));
    }
  });

  test("200 queued runs claimed by two nodes at once: every run is claimed exactly once", async () => {
    const url = await freshDatabaseUrl();
    const nodes: OpenedDatabase[] = [await openDatabase(dir(), { url }), await openDatabase(dir(), { url })];
    try {
      const db = nodes[0]?.db as OpenedDatabase["db"];
      const t = new Date().toISOString();
      await db.insertInto("workspaces").values({ id: "wsp_1", name: "W", slug: "w", created_at: t, updated_at: t }).execute();
      await db
        .insertInto("projects")
        .values({ id: "prj_1", workspace_id: "wsp_1", slug: "p", name: "P", description: "", openapi: null, created_at: t, updated_at: t })
        .execute();
      const ids = Array.from({ length: 200 }, () => newId("run"));
      await insertRuns(
        db,
        ids.map((id, i) => ({
          id,
          project_id: "prj_1",
          automation_id: "aut_1",
          automation_name: "A",
          group_run_id: null,
          environment_id: null,
          trigger: "api" as const,
          status: "queued" as const,
          spec: "{}",
          attempts: "[]",
          started_at: null,
          finished_at: null,
          duration_ms: null,
          summary: "{}",
          error: null,
          results: "[]",
          created_at: new Date(Date.parse(t) + i).toISOString(),
          updated_at: t,
        })),
      );
      // Each node's engine claims small batches as fast as it can until the queue is empty.
      const engine = async (n: OpenedDatabase) => {
        const mine: string[] = [];
        for (;;) {
          const { runs } = await n.queue.claimQueuedRuns(new Date().toISOString(), 3, 0);
          if (runs.length === 0) return mine;
          mine.push(...runs.map((r) => r.id));
        }
      };
      const [one, two] = await Promise.all(nodes.map(engine));
      const all = [...(one ?? []), ...(two ?? [])];
      expect(all.length).toBe(200);
      expect(new Set(all)).toEqual(new Set(ids));
      expect((one ?? []).length).toBeGreaterThan(0);
      expect((two ?? []).length).toBeGreaterThan(0);
      const counts = await nodes[1]?.queue.runCountsByStatus();
      expect(counts).toEqual([{ status: "running", n: 200 }]);
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
    }
  });
});
