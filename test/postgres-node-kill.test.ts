// Several nodes on PostgreSQL, whatever SVC_TEST_BACKEND says: a node killed with SIGKILL in the middle of a group
// run leaves no run behind. The runs it held end (error, "node lost") once its lease lapses, the other node runs
// the rest, and no run is executed twice (each automation calls a path of its own on a local target, counted).
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type ServeProcess, startServe } from "./helpers/binary";
import { sourceCli } from "./helpers/cli-source";
import { freshDatabaseUrl } from "./helpers/postgres";
import { runSql, tempDir } from "./helpers/server";
import { startCountingTarget } from "./helpers/target-app";

setDefaultTimeout(120_000);

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const RUNS = 100;
const LEASE_MS = 2_000;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("a node killed with SIGKILL mid group run: every run ends within the lease, none executed twice", async () => {
  const target = startCountingTarget(() => 150);
  const { hits } = target;
  const url = await freshDatabaseUrl();
  const cli = sourceCli({ SVC_DATABASE_URL: url });
  const nodes: ServeProcess[] = [];
  try {
    expect((await cli.run(["admin", "create-user", "--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme"])).code).toBe(0);
    const key = JSON.parse((await cli.run(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--json"])).stdout).key as string;
    for (let i = 0; i < 2; i++) {
      const dir = tempDir("svc-node-");
      dirs.push(dir);
      nodes.push(
        await startServe(["--data-dir", dir], {
          command: [process.execPath, MAIN],
          databaseUrl: url,
          secretsKeyFile: join(dirs[0] as string, "secrets.key"),
          env: { SVC_LOG_LEVEL: "warn", SVC_RATE_LIMIT_ENABLED: "false", SVC_RUNNER_LEASE_MS: String(LEASE_MS), SVC_RUNNER_CONCURRENCY: "8" },
        }),
      );
    }
    const [a, b] = nodes as [ServeProcess, ServeProcess];
    const call = async (node: ServeProcess, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${node.url}/api/v1/ops${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    await call(b, "POST", "/projects", { name: "Kill" });
    await call(b, "POST", "/projects/kill/environments", { name: "local", variables: { BASE_URL: target.url } });
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const made = await call(b, "POST", "/projects/kill/automations", {
        name: `hit ${i}`,
        kind: "http",
        environment: "local",
        steps: [{ request: { url: `/hit/${i}` } }],
      });
      ids.push(made.id);
    }
    await call(b, "POST", "/projects/kill/groups", { name: "all", automation_ids: ids });
    const group = await call(a, "POST", "/projects/kill/groups/all/run", {});

    // Both nodes execute; A dies with runs in its hands (8 at a time, 150 ms each: the group takes seconds).
    const rows = () =>
      runSql<{ id: string; automation_id: string; status: string; error: string | null; finished_at: string | null }>(
        url,
        "",
        "SELECT id, automation_id, status, error, finished_at FROM runs WHERE group_run_id = ?",
        [group.id],
      );
    for (const until = Date.now() + 60_000; Date.now() < until; await Bun.sleep(50)) {
      if ((await rows()).filter((r) => r.status === "passed").length >= 20) break;
    }
    const before = await rows();
    expect(before.filter((r) => r.status === "running").length).toBeGreaterThan(0);
    a.proc.kill("SIGKILL");
    await a.proc.exited;
    const killedAt = Date.now();

    // Every run ends: the rest on B, A's within its lease (plus B's sweep, every lease/4) of the kill.
    let after = await rows();
    for (const until = Date.now() + 60_000; Date.now() < until; await Bun.sleep(100)) {
      after = await rows();
      if (after.every((r) => !["queued", "running"].includes(r.status))) break;
    }
    expect(after.filter((r) => ["queued", "running"].includes(r.status))).toEqual([]);
    expect(after.length).toBe(RUNS);
    const lost = after.filter((r) => r.status === "error");
    expect(lost.length).toBeGreaterThan(0);
    for (const r of lost) {
      expect(r.error).toContain("node lost");
      expect(Date.parse(r.finished_at ?? "") - killedAt).toBeLessThan(LEASE_MS + 5_000);
    }
    expect(after.filter((r) => r.status !== "error").every((r) => r.status === "passed")).toBe(true);
    // None executed twice: each automation's path was called at most once, and exactly once for those that passed.
    const index = new Map(ids.map((id, i) => [id, i]));
    for (const r of after) {
      const n = hits.get(`/hit/${index.get(r.automation_id)}`) ?? 0;
      if (r.status === "passed") expect(n).toBe(1);
      else expect(n).toBeLessThanOrEqual(1);
    }
    expect(Math.max(...hits.values())).toBe(1);
  } finally {
    for (const n of nodes) if (n.proc.exitCode === null && n.proc.signalCode === null) await n.stop();
    cli.remove();
    await target.stop();
  }
});
