// Several nodes on one PostgreSQL database, against one SQLite node: throw-away PostgreSQL (initdb/pg_ctl, as the
// tests start it), `svc serve` nodes (dist/svc when built, else the source) each on its own port and data directory,
// remote runners (`svc runner`), and a local target. Prints:
//   1. API reads and writes, PostgreSQL node vs SQLite node: the same requests, requests/s and the ratios;
//   2. a group run of --checks http checks (1,000) on 3 nodes + 2 runners vs one SQLite node: wall time, runs/s;
//   3. a node killed with SIGKILL in the middle of a --kill-runs (1,000) run group run: every run terminal within
//      the lease, none executed twice (each automation calls a path of its own on the target, counted).
// Usage: bun bench/nodes.ts [--smoke] [--checks 1000] [--kill-runs 1000] [--requests 2000] [--lease-ms 5000]
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type ServeProcess, startServe } from "../test/helpers/binary";
import { freshDatabaseUrl } from "../test/helpers/postgres";
import { type RunnerProcess, startRunnerProcess } from "../test/helpers/remote-runner";
import { runSql } from "../test/helpers/server";
import { startCountingTarget } from "../test/helpers/target-app";
import { flag, has } from "./args";

const SMOKE = has("smoke");
const CHECKS = flag("checks", SMOKE ? 60 : 1000);
const KILL_RUNS = flag("kill-runs", SMOKE ? 60 : 1000);
const REQUESTS = flag("requests", SMOKE ? 200 : 2000);
const LEASE_MS = flag("lease-ms", SMOKE ? 2000 : 5000);
const CONCURRENCY = 8;
const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist/svc");
const COMMAND = existsSync(BINARY) ? [BINARY] : [process.execPath, join(ROOT, "src/main.ts")];

const work = mkdtempSync(join(tmpdir(), "svc-bench-nodes-"));
const keyFile = join(work, "secrets.key");
const started: { stop(signal?: NodeJS.Signals): Promise<number> }[] = [];

// A local target: counts its calls per path (and /slow/{n} waits a little, as a real service would).
const target = startCountingTarget((path) => (path.startsWith("/slow/") ? 100 : 0));
const { hits, url: BASE_URL } = target;

async function svc(databaseUrl: string | undefined, args: string[]): Promise<string> {
  const env = databaseUrl !== undefined ? { SVC_DATABASE_URL: databaseUrl } : {};
  const p = Bun.spawn([...COMMAND, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, SVC_LOG_LEVEL: "warn", ...env } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`svc ${args.join(" ")}: ${err}`);
  return out.trim();
}

interface Store {
  /** The PostgreSQL database, or none for SQLite in the first node's data directory. */
  databaseUrl?: string;
  dataDir: string;
  key: string;
}

async function newStore(postgres: boolean): Promise<Store> {
  const dataDir = mkdtempSync(join(work, postgres ? "pg-" : "sqlite-"));
  const databaseUrl = postgres ? await freshDatabaseUrl() : undefined;
  await svc(databaseUrl, ["admin", "create-user", "--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme", "--data-dir", dataDir]);
  const key = JSON.parse(
    await svc(databaseUrl, ["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--json", "--data-dir", dataDir]),
  ).key;
  return { databaseUrl, dataDir, key };
}

async function node(store: Store, extra: Record<string, string> = {}, own = true): Promise<ServeProcess> {
  const dataDir = own ? mkdtempSync(join(work, "node-")) : store.dataDir;
  const n = await startServe(["--data-dir", dataDir], {
    command: COMMAND,
    databaseUrl: store.databaseUrl,
    secretsKeyFile: keyFile,
    env: {
      SVC_LOG_LEVEL: "warn",
      SVC_RATE_LIMIT_ENABLED: "false",
      SVC_RUNNER_CONCURRENCY: String(CONCURRENCY),
      SVC_RUNNER_LEASE_MS: String(LEASE_MS),
      SVC_RETENTION_MAX_RUNS_PER_AUTOMATION: "0",
      ...extra,
    },
  });
  started.push(n);
  return n;
}

function client(url: string, key: string) {
  return async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}/api/v1/ops${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
}

/** `count` calls of `one`, CONCURRENCY at a time; requests per second. */
async function rate(count: number, one: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await one(next++);
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}

/** A project with `n` http automations (each calling `${prefix}{i}`) in one group; the group's path. */
async function groupOf(call: ReturnType<typeof client>, name: string, n: number, prefix: string): Promise<{ project: string; group: string }> {
  const slug = name.toLowerCase();
  await call("POST", "/projects", { name });
  await call("POST", `/projects/${slug}/environments`, { name: "local", variables: { BASE_URL } });
  const ids: string[] = new Array(n);
  await rate(n, async (i) => {
    ids[i] = (
      await call<{ id: string }>("POST", `/projects/${slug}/automations`, {
        name: `check ${i}`,
        kind: "http",
        environment: "local",
        steps: [
          {
            request: { url: `${prefix}${i}` },
            expect: [{ status: 200 }, { json: "$.ok", equals: true }, { header: "content-type", contains: "application/json" }],
          },
        ],
      })
    ).id;
  });
  await call("POST", `/projects/${slug}/groups`, { name: "all", automation_ids: ids });
  return { project: slug, group: "all" };
}

async function runGroup(call: ReturnType<typeof client>, g: { project: string; group: string }): Promise<{ ms: number; status: string }> {
  const t0 = performance.now();
  const run = await call<{ id: string }>("POST", `/projects/${g.project}/groups/${g.group}/run`, {});
  for (;;) {
    const r = await call<{ status: string }>("GET", `/projects/${g.project}/group-runs/${run.id}?wait=20`);
    if (!["queued", "running"].includes(r.status)) return { ms: performance.now() - t0, status: r.status };
  }
}

const pad = (s: string, n = 44) => s.padEnd(n);
const fmt = (x: number) => x.toFixed(x >= 100 ? 0 : 1);

async function apiFigures(): Promise<void> {
  console.log(`1. API reads and writes (${REQUESTS} requests each, ${CONCURRENCY} at once), one node each`);
  const figures: Record<string, { read: number; write: number }> = {};
  for (const backend of ["sqlite", "postgres"] as const) {
    const store = await newStore(backend === "postgres");
    const n = await node(store, {}, backend === "postgres");
    const call = client(n.url, store.key);
    await call("POST", "/projects", { name: "Read me" });
    const write = await rate(REQUESTS, (i) => call("POST", "/projects", { name: `Project ${i}` }));
    const read = await rate(REQUESTS, () => call("GET", "/projects/read-me"));
    figures[backend] = { read, write };
    console.log(`   ${pad(backend, 10)} reads ${fmt(read)} req/s   writes ${fmt(write)} req/s`);
    await n.stop();
  }
  const { sqlite, postgres } = figures as Record<string, { read: number; write: number }>;
  if (sqlite && postgres)
    console.log(`   postgres / sqlite     reads ${(postgres.read / sqlite.read).toFixed(2)}   writes ${(postgres.write / sqlite.write).toFixed(2)}`);
}

async function groupFigures(): Promise<void> {
  console.log(`2. a group run of ${CHECKS} http checks`);
  const lite = await newStore(false);
  const one = await node(lite, {}, false);
  const liteRun = await runGroup(client(one.url, lite.key), await groupOf(client(one.url, lite.key), "Checks", CHECKS, "/c/"));
  await one.stop();
  console.log(`   ${pad("1 SQLite node")} ${fmt(liteRun.ms)} ms  (${fmt(CHECKS / (liteRun.ms / 1000))} runs/s, ${liteRun.status})`);

  const pg = await newStore(true);
  const nodes = [await node(pg), await node(pg), await node(pg)];
  const call = client(nodes[0]?.url ?? "", pg.key);
  const runners: RunnerProcess[] = [];
  for (let i = 0; i < 2; i++) {
    const token = JSON.parse(await svc(pg.databaseUrl, ["admin", "create-runner-token", "--name", `runner-${i}`, "--json", "--data-dir", pg.dataDir])).token;
    const r = startRunnerProcess(nodes[i + 1]?.url ?? "", token, ["--concurrency", String(CONCURRENCY)]);
    runners.push(r);
    started.push(r);
  }
  const g = await groupOf(call, "Checks", CHECKS, "/c/");
  const pgRun = await runGroup(call, g);
  console.log(`   ${pad("3 PostgreSQL nodes + 2 runners")} ${fmt(pgRun.ms)} ms  (${fmt(CHECKS / (pgRun.ms / 1000))} runs/s, ${pgRun.status})`);
  console.log(`   ratio (3 nodes + 2 runners) / 1 SQLite node: ${(liteRun.ms / pgRun.ms).toFixed(2)}× the throughput`);
  for (const r of runners) await r.stop();
  for (const n of nodes) await n.stop();
}

async function killFigures(): Promise<void> {
  console.log(`3. SIGKILL of a node in the middle of a ${KILL_RUNS}-run group run (3 nodes, lease ${LEASE_MS} ms)`);
  const pg = await newStore(true);
  const nodes = [await node(pg), await node(pg), await node(pg)];
  const [victim, survivor] = nodes as [ServeProcess, ServeProcess, ServeProcess];
  const call = client(survivor.url, pg.key);
  const g = await groupOf(call, "Kill", KILL_RUNS, "/slow/");
  hits.clear();
  const run = await client(victim.url, pg.key)<{ id: string }>("POST", `/projects/${g.project}/groups/${g.group}/run`, {});
  const url = pg.databaseUrl ?? "";
  const rows = () =>
    runSql<{ id: string; automation_name: string; status: string; error: string | null; finished_at: string | null }>(
      url,
      "",
      "SELECT id, automation_name, status, error, finished_at FROM runs WHERE group_run_id = ?",
      [run.id],
    );
  const counts = (rs: { status: string }[]) => {
    const c: Record<string, number> = {};
    for (const r of rs) c[r.status] = (c[r.status] ?? 0) + 1;
    return JSON.stringify(c);
  };
  for (;;) {
    const rs = await rows();
    if (rs.filter((r) => r.status === "passed").length >= KILL_RUNS / 4) {
      victim.proc.kill("SIGKILL");
      await victim.proc.exited;
      console.log(`   ${pad("killed with SIGKILL at")} ${counts(rs)}`);
      break;
    }
    await Bun.sleep(20);
  }
  const killedAt = Date.now();
  let rs = await rows();
  while (rs.some((r) => r.status === "queued" || r.status === "running")) {
    if (Date.now() - killedAt > 10 * 60_000) throw new Error(`runs left: ${counts(rs)}`);
    await Bun.sleep(100);
    rs = await rows();
  }
  const doneAt = Date.now();
  const lost = rs.filter((r) => r.error?.includes("node lost"));
  const lostEnd = Math.max(0, ...lost.map((r) => Date.parse(r.finished_at ?? "") - killedAt));
  const calls = rs.map((r) => hits.get(`/slow/${r.automation_name.replace("check ", "")}`) ?? 0);
  const twice = calls.filter((n) => n > 1).length;
  const notRun = rs.filter((r, i) => r.status === "passed" && calls[i] !== 1).length;
  console.log(`   ${pad("every run ended")} ${counts(rs)} (${rs.length} runs), ${doneAt - killedAt} ms after the kill`);
  console.log(`   ${pad("runs the killed node held (ended as error)")} ${lost.length}, the last ${lostEnd} ms after the kill (lease ${LEASE_MS} ms)`);
  console.log(`   ${pad("target calls per run")} max ${Math.max(...calls)}; runs called twice: ${twice}; passed runs not called once: ${notRun}`);
  if (rs.length !== KILL_RUNS || twice > 0 || notRun > 0 || lostEnd > LEASE_MS + 2_000) throw new Error("the SIGKILL proof failed");
  console.log("   every run terminal within the lease (plus one sweep), none executed twice");
  for (const n of nodes) if (n !== victim) await n.stop();
}

try {
  await apiFigures();
  await groupFigures();
  await killFigures();
} finally {
  for (const s of started.reverse()) await s.stop().catch(() => 0);
  await target.stop();
  rmSync(work, { recursive: true, force: true });
}
process.exit(0);
