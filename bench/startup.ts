// The appliance's figures: binary size, cold start to the first 200 on /healthz (whole process, fresh data
// directory, median of N), the same on an existing data directory, idle RSS after start, and RSS after
// 10,000 authenticated API requests.
// Usage: bun bench/startup.ts [--binary dist/svc] [--runs 10] [--requests 10000] [--concurrency 16]
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : dflt;
};
const binary = resolve(opt("binary", join(import.meta.dir, "..", "dist", "svc")));
const runs = Number(opt("runs", "10"));
const requests = Number(opt("requests", "10000"));
const concurrency = Number(opt("concurrency", "16"));
const work = mkdtempSync(join(tmpdir(), "svc-startup-"));
// Rate limits off: 10,000 requests from one address would otherwise be throttled by design.
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, SVC_LOG_LEVEL: "error", SVC_RATE_LIMIT_ENABLED: "false" };

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** Spawns `svc serve` on a free port; resolves at the first 200 from /healthz, timed from the spawn. */
async function startTimed(dataDir: string) {
  const t0 = performance.now();
  const proc = Bun.spawn([binary, "serve", "--port", "0", "--data-dir", dataDir], { cwd: work, env, stdout: "ignore", stderr: "pipe" });
  let err = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true });
  })();
  for (;;) {
    const url = /svc listening on (\S+)/.exec(err)?.[1];
    if (url) {
      const r = await fetch(`${url}/healthz`).catch(() => null);
      if (r?.status === 200) return { proc, url, ms: performance.now() - t0 };
    }
    if (proc.exitCode !== null) throw new Error(`svc exited: ${err}`);
    if (performance.now() - t0 > 15_000) throw new Error(`no 200 within 15 s: ${err}`);
    await Bun.sleep(1);
  }
}

async function admin(...a: string[]): Promise<string> {
  const p = Bun.spawn([binary, "admin", ...a], { cwd: work, env, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`svc admin ${a[0]} failed: ${err}`);
  return out.trim();
}

try {
  const size = statSync(binary).size;
  const cold: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = await startTimed(join(work, `cold-${i}`));
    cold.push(s.ms);
    s.proc.kill("SIGTERM");
    await s.proc.exited;
  }

  // The same, on a data directory that already exists (every start after the first).
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = await startTimed(join(work, "cold-0"));
    warm.push(s.ms);
    s.proc.kill("SIGTERM");
    await s.proc.exited;
  }

  const data = join(work, "load");
  await admin("create-user", "--email", "bench@svc.test", "--name", "Bench", "--workspace", "bench", "--data-dir", data);
  const key = await admin("create-key", "--email", "bench@svc.test", "--workspace", "bench", "--data-dir", data);
  const s = await startTimed(data);
  await Bun.sleep(1000);
  const idle = rssBytes(s.proc.pid);
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const created = await fetch(`${s.url}/api/v1/ops/projects`, { method: "POST", headers, body: JSON.stringify({ name: "Bench" }) });
  if (created.status !== 201) throw new Error(`creating a project answered ${created.status}`);
  let sent = 0;
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (sent < requests) {
        sent++;
        // Alternates a listing and a single read, the CLI's usual pattern.
        const path = sent % 2 ? "/projects" : "/projects/bench";
        const r = await fetch(`${s.url}/api/v1/ops${path}`, { headers });
        await r.arrayBuffer();
        if (r.status !== 200) failed++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const loaded = rssBytes(s.proc.pid);
  s.proc.kill("SIGTERM");
  await s.proc.exited;

  const rows: [string, string][] = [
    ["binary", `${binary} (${mb(size)})`],
    [
      `cold start to first 200 on /healthz (median of ${runs})`,
      `${median(cold).toFixed(0)} ms (min ${Math.min(...cold).toFixed(0)}, max ${Math.max(...cold).toFixed(0)})`,
    ],
    [`start on an existing data dir to first 200 (median of ${runs})`, `${median(warm).toFixed(0)} ms`],
    ["idle RSS after start", mb(idle)],
    [`RSS after ${requests} API requests`, `${mb(loaded)} (${(requests / seconds).toFixed(0)} req/s at concurrency ${concurrency}, ${failed} non-200)`],
  ];
  for (const [k, v] of rows) console.log(`${k.padEnd(60)} ${v}`);
  console.log(
    JSON.stringify({
      binary_bytes: size,
      cold_start_ms_median: Math.round(median(cold)),
      cold_start_ms: cold.map(Math.round),
      warm_start_ms_median: Math.round(median(warm)),
      idle_rss_bytes: idle,
      rss_after_requests_bytes: loaded,
      requests,
      failed,
    }),
  );
  if (failed > 0) process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
