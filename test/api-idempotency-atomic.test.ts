// An Idempotency-Key's record commits with the work it answers for, in one transaction: when keeping the record
// fails (here a trigger, planted in the real SQLite file, refuses it), nothing was started, so the client's retry
// with the same key starts the work exactly once and is answered again from then on — for every operation that
// honours the key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const ids = { automation: "", group: "", feature: "" };

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const create = async (path: string, body: unknown) => {
    const res = await s.call("POST", path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  };
  await create("/projects", { name: "Shop", slug: "shop" });
  ids.feature = await create("/projects/shop/features", {
    name: "Login",
    acceptance_criteria: 'Scenario: opens\n  Given I open "/login"',
    target: { kind: "web", url: "http://127.0.0.1:9/login" },
  });
  const steps = [{ request: { url: "http://127.0.0.1:9/" } }];
  ids.automation = await create("/projects/shop/automations", { name: "one", kind: "http", steps, feature: ids.feature });
  ids.group = await create("/projects/shop/groups", { name: "both", automation_ids: [ids.automation] });
});
afterAll(() => s.stop());

/** A second connection to the server's SQLite file, as an operator's would be. */
function withFile<T>(use: (db: Database) => T): T {
  const db = new Database(join(s.dataDir, "svc.sqlite"));
  db.exec("PRAGMA busy_timeout = 5000");
  try {
    return use(db);
  } finally {
    db.close();
  }
}
const count = (sql: string) => withFile((db) => (db.query(sql).get() as { n: number }).n);

async function start(path: string, key: string, body: unknown = {}) {
  const res = await s.call("POST", path, body, undefined, { "idempotency-key": key });
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as { id?: string; error?: string } };
}

const starts = [
  {
    operation: "run_automation",
    path: () => `/projects/shop/automations/${ids.automation}/run`,
    work: "SELECT COUNT(*) AS n FROM runs WHERE group_run_id IS NULL",
  },
  { operation: "run_group", path: () => `/projects/shop/groups/${ids.group}/run`, work: "SELECT COUNT(*) AS n FROM group_runs WHERE group_id IS NOT NULL" },
  { operation: "run_feature", path: () => `/projects/shop/features/${ids.feature}/runs`, work: "SELECT COUNT(*) AS n FROM group_runs WHERE group_id IS NULL" },
  { operation: "start_generation", path: () => `/projects/shop/features/${ids.feature}/generation`, work: "SELECT COUNT(*) AS n FROM generations" },
];

describe("the Idempotency-Key record commits with the work", () => {
  for (const { operation, path, work } of starts) {
    test(`${operation}: when the record cannot be kept nothing starts, and the retry starts the work once`, async () => {
      const key = `refused-${operation}`;
      const before = count(work);
      // Refuses the record once it carries the answer, however it is written: the work is done by then.
      const refuse = (event: string) =>
        `CREATE TRIGGER refuse_${event} BEFORE ${event} ON idempotency_keys WHEN NEW.key = '${key}' AND NEW.response <> '' BEGIN SELECT RAISE(ABORT, 'refused'); END`;
      withFile((db) => db.exec(`${refuse("INSERT")}; ${refuse("UPDATE")}`));
      let failed: Awaited<ReturnType<typeof start>>;
      try {
        failed = await start(path(), key, operation === "start_generation" ? { strategy: "gherkin" } : {});
      } finally {
        withFile((db) => db.exec("DROP TRIGGER refuse_INSERT; DROP TRIGGER refuse_UPDATE"));
      }
      expect(failed.status).toBe(500);
      expect(failed.body.error).toBe("internal_error");
      expect(count(work)).toBe(before);

      const retry = await start(path(), key, operation === "start_generation" ? { strategy: "gherkin" } : {});
      expect({ status: retry.status, replayed: retry.replayed }).toEqual({ status: 202, replayed: null });
      expect(count(work)).toBe(before + 1);

      const again = await start(path(), key, operation === "start_generation" ? { strategy: "gherkin" } : {});
      expect({ status: again.status, replayed: again.replayed, id: again.body.id }).toEqual({ status: 202, replayed: "true", id: retry.body.id });
      expect(count(work)).toBe(before + 1);
    }, 30_000);
  }
});

/** `svc serve` from source in a process of its own, on the same data directory: a second node sharing the store. */
async function secondNode(): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts"), "serve", "--port", "0", "--data-dir", s.dataDir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", SVC_RATE_LIMIT_ENABLED: "false", SVC_LOG_LEVEL: "error" },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const stop = async () => {
    proc.kill();
    await proc.exited;
  };
  let seen = "";
  const decoder = new TextDecoder();
  for await (const chunk of proc.stderr) {
    seen += decoder.decode(chunk, { stream: true });
    const url = /svc listening on (\S+)/.exec(seen)?.[1];
    if (url) return { url, stop };
  }
  await stop();
  throw new Error(`the second node did not start: ${seen}`);
}

test("simultaneous requests with one key on two nodes sharing the store start one group run", async () => {
  const other = await secondNode();
  try {
    const path = `/projects/shop/groups/${ids.group}/run`;
    const viaOther = async (key = "two-nodes") => {
      const res = await fetch(`${other.url}/api/v1/ops${path}`, { method: "POST", headers: { authorization: `Bearer ${s.key}`, "idempotency-key": key } });
      return { status: res.status, body: (await res.json()) as { id?: string } };
    };
    // Both nodes have served this route once (and the key is known to both), so neither lags behind the other.
    expect((await viaOther("warm-up")).status).toBe(202);
    expect((await start(path, "warm-up-here")).status).toBe(202);
    const before = count("SELECT COUNT(*) AS n FROM group_runs WHERE group_id IS NOT NULL");
    const answers = await Promise.all([1, 2, 3, 4].flatMap(() => [start(path, "two-nodes"), viaOther()]));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(202));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(count("SELECT COUNT(*) AS n FROM group_runs WHERE group_id IS NOT NULL")).toBe(before + 1);
  } finally {
    await other.stop();
  }
}, 30_000);
