// Throughput and latency of authenticated reads (rate limiting ON) against a bare Bun.serve returning the
// same JSON, both driven by wrk at 64 connections after a warm-up pass; both servers log to a file. Prints a
// table and the ratio.
// Usage: bun bench/api.ts [--duration 10] [--connections 64] [--smoke]   (SVC_LOG_LEVEL=error to measure without request logs)
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { flag, has } from "./args";

const smoke = has("smoke");
const duration = flag("duration", smoke ? 2 : 10);
const connections = flag("connections", smoke ? 16 : 64);
const root = resolve(import.meta.dir, "..");
const binary = join(root, "dist/svc");
const svcCmd = existsSync(binary) ? [binary] : ["bun", join(root, "src/main.ts")];

if (!Bun.which("wrk")) {
  console.error("wrk is required (apt-get install wrk)");
  process.exit(smoke ? 0 : 1);
}

const dir = mkdtempSync(join(tmpdir(), "svc-bench-"));
const env = {
  ...process.env,
  SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? "info",
  SVC_RATE_LIMIT_PER_IP_PER_HOUR: "100000000",
  SVC_RATE_LIMIT_PER_WORKSPACE_PER_HOUR: "100000000",
};

async function run(cmd: string[]): Promise<string> {
  const p = Bun.spawn(cmd, { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")} failed: ${await new Response(p.stderr).text()}`);
  return out.trim();
}

/** Starts a server whose logs go to a file in the temp dir (as under systemd or Docker, where a collector reads
 * them), and waits for the line that says where it listens. */
async function startServer(cmd: string[], pattern: RegExp): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
  const logFile = join(dir, `${cmd.length}-${Date.now()}.log`);
  const proc = Bun.spawn(cmd, { cwd: dir, env, stdout: Bun.file(logFile), stderr: Bun.file(logFile) });
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    const text = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
    const m = pattern.exec(text);
    if (m?.[1]) return { url: m[1], proc };
    if (proc.exitCode !== null) throw new Error(`server exited: ${text}`);
    await Bun.sleep(20);
  }
  throw new Error(`${cmd.join(" ")} did not start within 15 s`);
}

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

function toMs(v: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(v);
  if (!m) return Number.NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : n;
}

/** One warm-up pass (the JIT compiles the hot path), then the measured one. */
async function wrk(url: string, key?: string): Promise<WrkResult> {
  const auth = key ? ["-H", `Authorization: Bearer ${key}`] : [];
  await Bun.spawn(["wrk", "-t2", `-c${connections}`, `-d${smoke ? 1 : 2}s`, ...auth, url], { stdout: "ignore" }).exited;
  const cmd = ["wrk", "-t2", `-c${connections}`, `-d${duration}s`, "--latency", ...auth, url];
  const out = await new Response(Bun.spawn(cmd, { stdout: "pipe" }).stdout).text();
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p50 = toMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? "");
  const p99 = toMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? "");
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sockErr = /Socket errors:.*?(\d+).*?(\d+).*?(\d+).*?(\d+)/.exec(out);
  const errors =
    non2xx +
    (sockErr
      ? sockErr
          .slice(1)
          .map(Number)
          .reduce((a, b) => a + b, 0)
      : 0);
  return { rps, p50, p99, errors };
}

try {
  await run([...svcCmd, "admin", "create-user", "--email", "bench@svc.test", "--name", "Bench", "--workspace", "bench", "--data-dir", "data"]);
  const key = await run([...svcCmd, "admin", "create-key", "--email", "bench@svc.test", "--workspace", "bench", "--data-dir", "data"]);
  const svc = await startServer([...svcCmd, "serve", "--port", "0", "--data-dir", "data"], /svc listening on (\S+)/);
  const api = `${svc.url}/api/v1/ops`;
  const h = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  await fetch(`${api}/projects`, { method: "POST", headers: h, body: JSON.stringify({ name: "Bench", slug: "bench" }) });
  const aut = (await (
    await fetch(`${api}/projects/bench/automations`, {
      method: "POST",
      headers: h,
      body: JSON.stringify({
        name: "item",
        kind: "http",
        steps: [{ request: { url: "http://127.0.0.1:9/items/1" }, expect: [{ status: 200 }, { json: "$.id", equals: 1 }] }],
      }),
    })
  ).json()) as { id: string };
  const projectsJson = await (await fetch(`${api}/projects`, { headers: h })).text();
  const automationJson = await (await fetch(`${api}/projects/bench/automations/${aut.id}`, { headers: h })).text();
  const limited = await fetch(`${api}/projects`, { headers: h });
  if (!limited.headers.get("ratelimit-limit")) throw new Error("rate limiting is not on");

  // The bare server: the same bodies from a plain Bun.serve in its own process.
  const bareSrc = join(dir, "bare.ts");
  await Bun.write(
    bareSrc,
    `
    const a = ${JSON.stringify(projectsJson)}; const b = ${JSON.stringify(automationJson)};
    const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => new Response(r.url.includes("/automations/") ? b : a, { headers: { "content-type": "application/json" } }) });
    console.error("bare listening on http://127.0.0.1:" + s.port);`,
  );
  const bare = await startServer(["bun", bareSrc], /bare listening on (\S+)/);

  const rows: [string, WrkResult][] = [];
  rows.push(["bare Bun.serve  GET /projects", await wrk(`${bare.url}/api/v1/ops/projects`)]);
  rows.push(["svc  GET /projects (auth + rate limit)", await wrk(`${api}/projects`, key)]);
  rows.push(["bare Bun.serve  GET /automations/{id}", await wrk(`${bare.url}/api/v1/ops/projects/bench/automations/${aut.id}`)]);
  rows.push(["svc  GET /automations/{id} (auth + rate limit)", await wrk(`${api}/projects/bench/automations/${aut.id}`, key)]);
  svc.proc.kill();
  bare.proc.kill();

  console.log(
    `\nwrk -t2 -c${connections} -d${duration}s on ${navigator.hardwareConcurrency} cores, svc log level ${env.SVC_LOG_LEVEL}${smoke ? " (smoke run)" : ""}`,
  );
  console.log("endpoint".padEnd(48), "req/s".padStart(10), "p50 ms".padStart(8), "p99 ms".padStart(8), "errors".padStart(7));
  for (const [name, r] of rows) {
    console.log(name.padEnd(48), r.rps.toFixed(0).padStart(10), r.p50.toFixed(2).padStart(8), r.p99.toFixed(2).padStart(8), String(r.errors).padStart(7));
  }
  const ratio = (i: number, j: number) => ((rows[j]?.[1].rps ?? 0) / (rows[i]?.[1].rps ?? 1)) * 100;
  console.log(`\nsvc / bare: projects ${ratio(0, 1).toFixed(0)}%, automation ${ratio(2, 3).toFixed(0)}%  (target ≥ 40%, p99 < 10 ms)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
