// Sustained mixed API load (reads, writes, run dispatches) at N connections against `svc serve`, then the
// rate limiter under load. Prints throughput, latency percentiles, status counts and server RSS over time.
// Usage: bun bench/load.ts [--duration 60] [--connections 64] [--smoke]
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { flag, has } from "./args";

const smoke = has("smoke");
const durationS = flag("duration", smoke ? 4 : 60);
const connections = flag("connections", smoke ? 16 : 64);
const root = resolve(import.meta.dir, "..");
const svcCmd = existsSync(join(root, "dist/svc")) ? [join(root, "dist/svc")] : ["bun", join(root, "src/main.ts")];

async function run(cmd: string[], cwd: string, env: Record<string, string | undefined>): Promise<string> {
  const p = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")}: ${await new Response(p.stderr).text()}`);
  return out.trim();
}

async function startSvc(env: Record<string, string | undefined>) {
  const dir = mkdtempSync(join(tmpdir(), "svc-load-"));
  await run([...svcCmd, "admin", "create-user", "--email", "load@svc.test", "--name", "Load", "--workspace", "load"], dir, env);
  const key = await run([...svcCmd, "admin", "create-key", "--email", "load@svc.test", "--workspace", "load"], dir, env);
  const proc = Bun.spawn([...svcCmd, "serve", "--port", "0"], { cwd: dir, env, stdout: "ignore", stderr: "pipe" });
  const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
  let text = "";
  let url = "";
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`svc exited: ${text}`);
    text += new TextDecoder().decode(value);
    url = /svc listening on (\S+)/.exec(text)?.[1] ?? "";
  }
  void (async () => {
    for (;;) if ((await reader.read()).done) break;
  })();
  return { dir, key, url, proc, api: `${url}/api/v1/ops` };
}

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
};
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;

// A local target for the dispatched runs.
const target = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json({ id: 1, ok: true }) });
const baseEnv = { ...process.env, SVC_LOG_LEVEL: "error" };

// ---- phase 1: mixed load ----
const svc = await startSvc({ ...baseEnv, SVC_RATE_LIMIT_PER_IP_PER_HOUR: "100000000", SVC_RATE_LIMIT_PER_WORKSPACE_PER_HOUR: "100000000" });
const h = { authorization: `Bearer ${svc.key}`, "content-type": "application/json" };
await fetch(`${svc.api}/projects`, { method: "POST", headers: h, body: '{"name":"Load","slug":"load"}' });
const aut = (await (
  await fetch(`${svc.api}/projects/load/automations`, {
    method: "POST",
    headers: h,
    body: JSON.stringify({
      name: "ping",
      kind: "http",
      steps: [{ request: { url: `http://127.0.0.1:${target.port}/` }, expect: [{ status: 200 }, { json: "$.ok", equals: true }] }],
    }),
  })
).json()) as { id: string };
const feature = (await (await fetch(`${svc.api}/projects/load/features`, { method: "POST", headers: h, body: '{"name":"F"}' })).json()) as { id: string };

const mix: [number, () => Promise<Response>][] = [
  [35, () => fetch(`${svc.api}/projects`, { headers: h })],
  [20, () => fetch(`${svc.api}/projects/load/automations/${aut.id}`, { headers: h })],
  [15, () => fetch(`${svc.api}/projects/load/runs?limit=20`, { headers: h })],
  [15, () => fetch(`${svc.api}/projects/load/features`, { method: "POST", headers: h, body: '{"name":"f"}' })],
  [
    5,
    () =>
      fetch(`${svc.api}/projects/load/features/${feature.id}`, { method: "PATCH", headers: h, body: JSON.stringify({ description: String(Math.random()) }) }),
  ],
  [10, () => fetch(`${svc.api}/projects/load/automations/${aut.id}/run`, { method: "POST", headers: h })],
];
const pick = () => {
  let r = Math.random() * 100;
  for (const [w, f] of mix) {
    if ((r -= w) < 0) return f;
  }
  return mix[0]?.[1] ?? (() => fetch(svc.url));
};

const latencies: number[] = [];
const statuses = new Map<number, number>();
let networkErrors = 0;
const rss: [number, number][] = [[0, rssMb(svc.proc.pid)]];
const started = performance.now();
const deadline = started + durationS * 1000;
const sampler = setInterval(() => rss.push([Math.round((performance.now() - started) / 1000), rssMb(svc.proc.pid)]), Math.max(1000, (durationS * 1000) / 6));
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await pick()();
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      } catch {
        networkErrors++;
      }
    }
  }),
);
clearInterval(sampler);
const elapsed = (performance.now() - started) / 1000;
rss.push([Math.round(elapsed), rssMb(svc.proc.pid)]);
latencies.sort((a, b) => a - b);
const fiveXX = [...statuses].filter(([s]) => s >= 500).reduce((a, [, n]) => a + n, 0);

console.log(`\nmixed load: ${connections} connections for ${elapsed.toFixed(1)} s${smoke ? " (smoke run)" : ""}`);
console.log(`  requests        ${latencies.length}  (${(latencies.length / elapsed).toFixed(0)} req/s)`);
console.log(
  `  latency ms      p50 ${pct(latencies, 50).toFixed(2)}  p99 ${pct(latencies, 99).toFixed(2)}  max ${(latencies[latencies.length - 1] ?? 0).toFixed(2)}`,
);
console.log(
  `  statuses        ${[...statuses]
    .sort()
    .map(([s, n]) => `${s}:${n}`)
    .join("  ")}  network errors: ${networkErrors}`,
);
console.log(`  5xx             ${fiveXX}  (target 0)`);
console.log(`  server RSS MB   ${rss.map(([t, m]) => `${t}s:${m}`).join("  ")}`);
svc.proc.kill("SIGTERM");
await svc.proc.exited;
rmSync(svc.dir, { recursive: true, force: true });

// ---- phase 2: the workspace budget under concurrent load ----
const budget = smoke ? 200 : 1000;
const limited = await startSvc({ ...baseEnv, SVC_RATE_LIMIT_PER_IP_PER_HOUR: "100000000", SVC_RATE_LIMIT_PER_WORKSPACE_PER_HOUR: String(budget) });
const lh = { authorization: `Bearer ${limited.key}` };
let ok = 0;
let refused = 0;
const retryAfters = new Set<string>();
const total = budget * 2;
let sent = 0;
const t1 = performance.now();
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (sent < total) {
      sent++;
      const res = await fetch(`${limited.api}/projects`, { headers: lh });
      await res.arrayBuffer();
      if (res.status === 200) ok++;
      else if (res.status === 429) {
        refused++;
        retryAfters.add(res.headers.get("retry-after") ?? "missing");
      }
    }
  }),
);
const secs = (performance.now() - t1) / 1000;
const refill = (budget / 3600) * secs;
console.log(`\nrate limit under load: budget ${budget}/h, ${total} requests at 32 connections in ${secs.toFixed(2)} s`);
console.log(`  admitted ${ok}, refused ${refused}  (expected ${budget} + refill ≤ ${Math.floor(refill) + 1})`);
console.log(`  Retry-After values: ${[...retryAfters].join(", ")}  (one token every ${(3600 / budget).toFixed(1)} s)`);
limited.proc.kill("SIGTERM");
await limited.proc.exited;
rmSync(limited.dir, { recursive: true, force: true });
target.stop(true);
process.exit(fiveXX === 0 ? 0 : 1);
