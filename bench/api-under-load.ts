// API latency while heavy runs execute: `runner.concurrency` 12 runs at once, each 10 steps that fetch a 4 MB JSON
// body and check 20 JSON paths on it, while one client reads the API (get_project and list_runs, one request at a
// time). Prints p50/p99/max of those reads idle and under load, and the server's CPU (server + its workers).
// Usage: bun bench/api-under-load.ts [--duration 10] [--runs 12] [--smoke]
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { flag, has } from "./args";

const smoke = has("smoke");
const DURATION_S = flag("duration", smoke ? 3 : 10);
const RUNS = flag("runs", 12);
const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist/svc");
const svcCmd = existsSync(BINARY) ? [BINARY] : ["bun", join(ROOT, "src/main.ts")];
const work = mkdtempSync(join(tmpdir(), "svc-bench-load-"));

// A 4 MB JSON document: 50,000 items.
const items = Array.from({ length: 50_000 }, (_, i) => ({ id: i, name: `item number ${i}`, price: i % 997, tags: ["alpha", "beta", `t${i % 50}`] }));
const big = new TextEncoder().encode(JSON.stringify({ total: items.length, items }));
const target = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => new Response(big, { headers: { "content-type": "application/json" } }),
});
const targetUrl = `http://127.0.0.1:${target.port}`;

function statFields(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  } catch {
    return [];
  }
}

/** CPU ms of a process and every process below it (exited children included). */
function cpuMs(pid: number): number {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = Number(statFields(Number(name))[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid)?.push(Number(name));
  }
  let total = 0;
  const todo = [pid];
  while (todo.length > 0) {
    const p = todo.pop() as number;
    const f = statFields(p);
    if (f.length > 14) total += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
    todo.push(...(children.get(p) ?? []));
  }
  return total;
}

async function admin(args: string[]): Promise<string> {
  const p = Bun.spawn([...svcCmd, "admin", ...args, "--data-dir", work], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`admin ${args[0]}: ${err}`);
  return out.trim();
}

await admin(["create-user", "--email", "bench@acme.test", "--name", "Bench", "--workspace", "acme"]);
const key = await admin(["create-key", "--email", "bench@acme.test", "--workspace", "acme"]);
const proc = Bun.spawn([...svcCmd, "serve", "--port", "0", "--data-dir", work], {
  stdout: "ignore",
  stderr: "pipe",
  env: { ...process.env, SVC_RATE_LIMIT_ENABLED: "false", SVC_RUNNER_CONCURRENCY: String(RUNS), SVC_LOG_LEVEL: "warn", SVC_RUNNER_SHUTDOWN_GRACE_MS: "0" },
});
const reader = proc.stderr.getReader();
let buf = "";
let url = "";
while (!url) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`svc serve exited: ${buf}`);
  buf += new TextDecoder().decode(value);
  url = /svc listening on (\S+)/.exec(buf)?.[1] ?? "";
}
void (async () => {
  for (;;) if ((await reader.read()).done) break;
})();

const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
  const res = await fetch(`${url}/api/v1/ops${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
};

/** Reads the API one request at a time for `seconds`: the latencies in ms. */
async function readLatencies(seconds: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < end) {
    const t0 = performance.now();
    await call("GET", n++ % 2 === 0 ? "/projects/bench" : "/projects/bench/runs?limit=20");
    out.push(performance.now() - t0);
    await Bun.sleep(5);
  }
  return out;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] ?? 0;
};
const show = (label: string, xs: number[]) =>
  console.log(`${label}: ${xs.length} reads, p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`);

try {
  await call("POST", "/projects", { name: "bench", slug: "bench" });
  await call("POST", "/projects/bench/environments", { name: "local", variables: { BASE_URL: targetUrl } });
  const expect = Array.from({ length: 20 }, (_, i) => ({ json: `$.items[${i * 1000}].id`, equals: i * 1000 }));
  const steps = Array.from({ length: 10 }, () => ({ request: { url: "/big.json" }, expect }));
  const a = await call<{ id: string }>("POST", "/projects/bench/automations", { name: "heavy", kind: "http", environment: "local", steps });
  console.log(`API reads while heavy runs execute: ${RUNS} runs at once, each 10 steps of a ${(big.length / 1e6).toFixed(1)} MB JSON body and 20 JSON paths`);
  console.log(`server: ${svcCmd.join(" ")}; machine: ${navigator.hardwareConcurrency} cores`);
  show("idle      ", await readLatencies(Math.min(3, DURATION_S)));
  // RUNS executing for the whole measurement: the queue is topped up so it never runs dry.
  let topping = true;
  let queuedTotal = 0;
  const queueRuns = async (n: number) => {
    for (let i = 0; i < n; i++) {
      await call("POST", `/projects/bench/automations/${a.id}/run`, {});
      queuedTotal++;
    }
  };
  await queueRuns(RUNS * 2);
  const topUp = (async () => {
    while (topping) {
      const waiting = await call<{ data: unknown[] }>("GET", "/projects/bench/runs?status=queued&limit=100");
      if (waiting.data.length < RUNS) await queueRuns(RUNS);
      await Bun.sleep(200);
    }
  })();
  await Bun.sleep(500);
  const passedBefore = (await call<{ data: unknown[] }>("GET", "/projects/bench/runs?status=passed&limit=200")).data.length;
  const cpu0 = cpuMs(proc.pid);
  const t0 = performance.now();
  const loaded = await readLatencies(DURATION_S);
  const wall = performance.now() - t0;
  const cpu = cpuMs(proc.pid) - cpu0;
  topping = false;
  await topUp;
  const finished = (await call<{ data: unknown[] }>("GET", "/projects/bench/runs?status=passed&limit=200")).data.length - passedBefore;
  show("under load", loaded);
  console.log(
    `runs passed during the measurement ${finished} (${queuedTotal} queued in all); server CPU (server + workers) ${cpu} ms in ${wall.toFixed(0)} ms wall`,
  );
} finally {
  proc.kill("SIGTERM");
  await proc.exited;
  target.stop(true);
  rmSync(work, { recursive: true, force: true });
}
