// Benchmark of the run engine: 1,000 http checks (one request + 3 assertions each) through the API as one group
// run, against a local target; a bare Bun fetch loop (10 at once, nothing recorded), Hurl (a native runner, 10
// jobs, process start included) and Newman run the same checks side by side, and the ratios svc/bare, svc/Hurl and
// svc/Newman are printed (medians of the rounds). svc's rate is shown as the client saw it (POST to the long-poll's
// answer) and by the server's own wall (the group run's created_at → finished_at, as the issue measured it). Server
// CPU counts the server and every process below it (its worker processes), read from /proc.
// `--browser`: 50 browser automations (goto + expect text) as one group run at each --concurrency, in checks per minute
// (the server uses the Chromium it finds: SVC_RUNNER_BROWSER_PATH in this environment chooses).
// `--svc A,B`: the servers to measure side by side (paths of compiled executables, or `src` for bun src/main.ts);
// default dist/svc when built, else the source. `--cpu-prof DIR` (source servers only) writes each server's CPU profile there.
// Usage: bun bench/runner.ts [--no-http] [--checks 1000] [--concurrency 4,32] [--rounds 3] [--no-newman] [--no-hurl] [--browser [--browser-checks 50]] [--svc A,B] [--smoke]
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startTargetApp } from "../test/helpers/target-app";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
/** `--smoke`: a short run that only shows the benchmark still works (CI runs it): 50 checks, one round, no Newman. */
const SMOKE = process.argv.includes("--smoke");
const CHECKS = Number(arg("checks", SMOKE ? "50" : "1000"));
const CONCURRENCIES = arg("concurrency", SMOKE ? "4" : "4,32")
  .split(",")
  .map(Number);
const ROUNDS = SMOKE ? 1 : Math.max(3, Number(arg("rounds", "3")));
const BROWSER = process.argv.includes("--browser");
const BROWSER_CHECKS = Number(arg("browser-checks", SMOKE ? "4" : "50"));
const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist/svc");
const SERVERS = arg("svc", existsSync(BINARY) ? BINARY : "src")
  .split(",")
  .map((s) => (s === "src" ? s : resolve(s)));
const CPU_PROF = process.argv.includes("--cpu-prof") ? resolve(arg("cpu-prof", "prof")) : null;

const target = startTargetApp();
const work = join(tmpdir(), `svc-bench-${process.pid}`);
mkdirSync(work, { recursive: true });

const checkOf = (n: number) => ({ path: `/items/${(n % 3) + 1}`, id: (n % 3) + 1 });

function serverCommand(server: string, profile = false): string[] {
  if (server !== "src") return [server];
  return ["bun", ...(profile && CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", CPU_PROF] : []), join(ROOT, "src/main.ts")];
}

async function admin(server: string, dataDir: string, args: string[]): Promise<string> {
  const p = Bun.spawn([...serverCommand(server), "admin", ...args, "--data-dir", dataDir], { stdout: "pipe", stderr: "pipe", env: { ...process.env } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`admin ${args[0]}: ${err}`);
  return out.trim();
}

function statFields(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  } catch {
    return [];
  }
}

/** CPU time (user + system) the process and every process below it (workers, their browsers) have used so far,
 * children that already exited included: a figure the other load on the machine does not inflate. */
function cpuMs(pid: number, alone = false): number {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = Number(statFields(Number(name))[1]);
    if (!parents.has(ppid)) parents.set(ppid, []);
    parents.get(ppid)?.push(Number(name));
  }
  let total = 0;
  const todo = [pid];
  while (todo.length > 0) {
    const p = todo.pop() as number;
    const f = statFields(p);
    // utime, stime, cutime, cstime are fields 14-17 of /proc/PID/stat, in clock ticks of 10 ms; cutime/cstime
    // hold the children that exited and were waited for.
    if (f.length > 14) total += (Number(f[11]) + Number(f[12]) + (alone ? 0 : Number(f[13]) + Number(f[14]))) * 10;
    if (!alone) todo.push(...(parents.get(p) ?? []));
  }
  return total;
}

function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? "0");
  return kb / 1024;
}

interface Round {
  /**
   * Starting the group run (the POST), first run started → last run finished; then, after the last run's outcome, when
   * the client knew, when that run's row was written and when the group run's verdict was; and how long each run's
   * outcome waited to be written (median and most, over the runs).
   */
  phases: { postMs: number; runsMs: number; tailMs: number; writtenMs: number; settledMs: number; lagMs: number; lagMaxMs: number };
  wallMs: number;
  /** The issue's own measure: the group run's created_at → finished_at as the server stored them. */
  serverWallMs: number;
  serverCpuMs: number;
  /** The server process alone (the API's thread and its helpers), without its workers. */
  ownCpuMs: number;
  perSec: number;
  passed: number;
  recordedSteps: number;
}

async function svcRun(server: string, concurrency: number, browser = false): Promise<{ rounds: Round[]; rssMb: number }> {
  const dataDir = join(work, `data-${SERVERS.indexOf(server)}-${concurrency}-${browser ? "browser" : "http"}`);
  const checks = browser ? BROWSER_CHECKS : CHECKS;
  await admin(server, dataDir, ["create-user", "--email", "bench@acme.test", "--name", "Bench", "--workspace", "acme"]);
  const key = await admin(server, dataDir, ["create-key", "--email", "bench@acme.test", "--workspace", "acme"]);
  const proc = Bun.spawn([...serverCommand(server, true), "serve", "--port", "0", "--data-dir", dataDir], {
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, SVC_RATE_LIMIT_ENABLED: "false", SVC_RUNNER_CONCURRENCY: String(concurrency), SVC_LOG_LEVEL: "warn" },
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
  try {
    await call("POST", "/projects", { name: "bench", slug: "bench" });
    await call("POST", "/projects/bench/environments", { name: "local", variables: { BASE_URL: target.url } });
    const ids: string[] = [];
    for (let n = 0; n < checks; n++) {
      const c = checkOf(n);
      const a = await call<{ id: string }>(
        "POST",
        "/projects/bench/automations",
        browser
          ? { name: `page ${n}`, kind: "browser", environment: "local", steps: [{ goto: "/dashboard?user=bench" }, { expect: { text: "Welcome bench" } }] }
          : {
              name: `check ${n}`,
              kind: "http",
              environment: "local",
              steps: [
                {
                  request: { url: c.path },
                  expect: [{ status: 200 }, { json: "$.id", equals: c.id }, { header: "content-type", contains: "application/json" }],
                },
              ],
            },
      );
      ids.push(a.id);
    }
    const group = await call<{ id: string }>("POST", "/projects/bench/groups", { name: "bench", automation_ids: ids });
    // The same group several times: the first run meets a cold server (code not yet optimised by the JIT), later ones a warm one.
    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const t0 = performance.now();
      const cpu0 = cpuMs(proc.pid);
      const own0 = cpuMs(proc.pid, true);
      const gr = await call<{ id: string }>("POST", `/projects/bench/groups/${group.id}/run`, {});
      const postMs = performance.now() - t0;
      let status = "queued";
      // Waited for as `svc groups run --watch` does: a long-poll that answers as the group run ends.
      while (status === "queued" || status === "running") {
        status = (await call<{ status: string }>("GET", `/projects/bench/group-runs/${gr.id}?wait=30`)).status;
      }
      const wallMs = performance.now() - t0;
      const seenAt = Date.now();
      const serverCpuMs = cpuMs(proc.pid) - cpu0;
      const ownCpuMs = cpuMs(proc.pid, true) - own0;
      // Every run's step result is in the database: count passed runs and recorded assertions straight from it.
      const db = new Database(join(dataDir, "svc.sqlite"), { readonly: true });
      const rows = db.query("SELECT status, results, finished_at, updated_at FROM runs WHERE group_run_id = ?").all(gr.id) as {
        status: string;
        results: string;
        finished_at: string;
        updated_at: string;
      }[];
      const lags = rows.map((r) => Date.parse(r.updated_at) - Date.parse(r.finished_at));
      const span = db.query("SELECT MIN(started_at) AS s, MAX(finished_at) AS f, MAX(updated_at) AS w FROM runs WHERE group_run_id = ?").get(gr.id) as {
        s: string;
        f: string;
        w: string;
      };
      const own = db.query("SELECT created_at AS c, finished_at AS f, updated_at AS u FROM group_runs WHERE id = ?").get(gr.id) as {
        c: string;
        f: string;
        u: string;
      };
      db.close();
      const phases = {
        postMs,
        runsMs: Date.parse(span.f) - Date.parse(span.s),
        tailMs: seenAt - Date.parse(span.f),
        writtenMs: Date.parse(span.w) - Date.parse(span.f),
        settledMs: Date.parse(own.u) - Date.parse(span.f),
        lagMs: median(lags),
        lagMaxMs: Math.max(...lags),
      };
      let passed = 0;
      let recordedSteps = 0;
      for (const r of rows) {
        if (r.status === "passed") passed++;
        const steps = (JSON.parse(r.results) as { steps?: { status: string; assertions?: unknown[] }[] }).steps ?? [];
        if (browser ? steps.length === 2 && steps.every((x) => x.status === "passed") : steps.length === 1 && steps[0]?.assertions?.length === 3)
          recordedSteps++;
      }
      rounds.push({
        phases,
        wallMs,
        serverWallMs: Date.parse(own.f) - Date.parse(own.c),
        perSec: (checks / wallMs) * 1000,
        serverCpuMs,
        ownCpuMs,
        passed,
        recordedSteps,
      });
    }
    return { rounds, rssMb: peakRssMb(proc.pid) };
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

async function newman(parallel: number): Promise<{ wallMs: number; perSec: number; failures: number }> {
  const prefix = join(work, "newman");
  const bin = join(prefix, "node_modules/.bin/newman");
  if (!existsSync(bin)) {
    const install = Bun.spawnSync(["npm", "install", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", "newman@6"], {
      stdout: "ignore",
      stderr: "inherit",
    });
    if (install.exitCode !== 0) throw new Error("npm install newman failed");
  }
  const per = Math.ceil(CHECKS / parallel);
  const files: string[] = [];
  for (let p = 0; p < parallel; p++) {
    const items = [];
    for (let n = p * per; n < Math.min(CHECKS, (p + 1) * per); n++) {
      const c = checkOf(n);
      items.push({
        name: `check ${n}`,
        request: { method: "GET", url: `${target.url}${c.path}` },
        event: [
          {
            listen: "test",
            script: {
              type: "text/javascript",
              exec: [
                "pm.test('status', () => pm.response.to.have.status(200));",
                `pm.test('id', () => pm.expect(pm.response.json().id).to.eql(${c.id}));`,
                "pm.test('content-type', () => pm.expect(pm.response.headers.get('content-type')).to.include('application/json'));",
              ],
            },
          },
        ],
      });
    }
    const file = join(work, `collection-${parallel}-${p}.json`);
    writeFileSync(
      file,
      JSON.stringify({ info: { name: "bench", schema: "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" }, item: items }),
    );
    files.push(file);
  }
  const t0 = performance.now();
  const results = await Promise.all(
    files.map(async (file, i) => {
      const report = join(work, `newman-${parallel}-${i}.json`);
      const proc = Bun.spawn(["node", bin, "run", file, "--reporters", "json", "--reporter-json-export", report], { stdout: "ignore", stderr: "inherit" });
      await proc.exited;
      const r = JSON.parse(readFileSync(report, "utf8")) as { run: { stats: { assertions: { failed: number } } } };
      return r.run.stats.assertions.failed;
    }),
  );
  const wallMs = performance.now() - t0;
  return { wallMs, perSec: (CHECKS / wallMs) * 1000, failures: results.reduce((a, b) => a + b, 0) };
}

/**
 * A native runner: Hurl (scripts/hurl.sh), the same checks in `jobs` files run `--jobs` at once in test mode, process
 * start included. null when Hurl cannot be had here.
 */
async function hurl(jobs: number): Promise<{ wallMs: number; perSec: number; failed: boolean } | null> {
  const script = join(ROOT, "scripts/hurl.sh");
  if (Bun.spawnSync(["bash", script, "--fetch"], { stdout: "ignore", stderr: "ignore" }).exitCode !== 0) return null;
  const per = Math.ceil(CHECKS / jobs);
  const files: string[] = [];
  for (let j = 0; j < jobs; j++) {
    const entries: string[] = [];
    for (let n = j * per; n < Math.min(CHECKS, (j + 1) * per); n++) {
      const c = checkOf(n);
      entries.push(`GET ${target.url}${c.path}\nHTTP 200\n[Asserts]\njsonpath "$.id" == ${c.id}\nheader "Content-Type" contains "application/json"\n`);
    }
    const file = join(work, `checks-${jobs}-${j}.hurl`);
    writeFileSync(file, entries.join("\n"));
    files.push(file);
  }
  const t0 = performance.now();
  const proc = Bun.spawn(["bash", script, "--test", "--jobs", String(jobs), ...files], { stdout: "ignore", stderr: "ignore" });
  const code = await proc.exited;
  const wallMs = performance.now() - t0;
  return { wallMs, perSec: (CHECKS / wallMs) * 1000, failed: code !== 0 };
}

/** The floor: the same checks as a bare Bun loop in this process, 10 fetches at once, nothing recorded. */
async function bare(): Promise<{ wallMs: number; perSec: number; failures: number }> {
  let next = 0;
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < CHECKS) {
        const c = checkOf(next++);
        const res = await fetch(`${target.url}${c.path}`);
        const body = (await res.json()) as { id: number };
        if (res.status !== 200 || body.id !== c.id || !res.headers.get("content-type")?.includes("application/json")) failures++;
      }
    }),
  );
  const wallMs = performance.now() - t0;
  return { wallMs, perSec: (CHECKS / wallMs) * 1000, failures };
}

const fmt = (n: number, d = 0) => n.toFixed(d);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log(`svc run engine benchmark: ${CHECKS} http checks (1 request + 3 assertions each) against a local target`);
console.log(`servers: ${SERVERS.map((s) => serverCommand(s).join(" ")).join(" | ")}; machine: ${navigator.hardwareConcurrency} cores`);
const label = (server: string) => (SERVERS.length > 1 ? ` [${server === "src" ? "src" : server}]` : "");
const svcMedians: { server: string; concurrency: number; median: number; own: number }[] = [];
let bareMedian = 0;
if (!process.argv.includes("--no-http")) {
  const bareRates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const b = await bare();
    bareRates.push(b.perSec);
    console.log(`bare   round ${round + 1}: ${fmt(b.wallMs)} ms wall, ${fmt(b.perSec)} checks/s, ${b.failures} failed checks`);
  }
  bareMedian = median(bareRates);
  console.log(`bare   10 fetches at once: median ${fmt(bareMedian)} checks/s`);
  for (const c of CONCURRENCIES) {
    for (const server of SERVERS) {
      const r = await svcRun(server, c);
      r.rounds.forEach((x, i) => {
        console.log(
          `svc${label(server)} concurrency ${String(c).padStart(3)}, round ${i + 1} (${i === 0 ? "cold" : "warm"}): ${fmt(x.wallMs)} ms wall (start ${fmt(x.phases.postMs)}, runs ${fmt(x.phases.runsMs)}, seen ${fmt(x.phases.tailMs)} after: written +${fmt(x.phases.writtenMs)}, settled +${fmt(x.phases.settledMs)}; a run written ${fmt(x.phases.lagMs)} ms after its outcome, at most ${fmt(x.phases.lagMaxMs)}), ${fmt(x.perSec)} checks/s (server's own wall ${fmt(x.serverWallMs)} ms: ${fmt((CHECKS / x.serverWallMs) * 1000)}/s), server CPU ${fmt(x.serverCpuMs)} ms (${fmt((x.serverCpuMs * 1000) / CHECKS)} µs/check, server process alone ${fmt((x.ownCpuMs * 1000) / CHECKS)}), ${x.passed}/${CHECKS} runs passed, ${x.recordedSteps}/${CHECKS} step results with 3 assertions recorded`,
        );
      });
      const rates = r.rounds.map((x) => x.perSec);
      const m = median(rates);
      const own = median(r.rounds.map((x) => (CHECKS / x.serverWallMs) * 1000));
      svcMedians.push({ server, concurrency: c, median: m, own });
      console.log(
        `svc${label(server)} concurrency ${String(c).padStart(3)}: median ${fmt(m)} checks/s (${fmt(m / bareMedian, 2)}x bare), best ${fmt(Math.max(...rates))}; by the server's own wall (created_at → finished_at) ${fmt(own)} checks/s (${fmt(own / bareMedian, 2)}x bare); median server CPU ${fmt((median(r.rounds.map((x) => x.serverCpuMs)) * 1000) / CHECKS)} µs/check (server + workers), ${fmt((median(r.rounds.map((x) => x.ownCpuMs)) * 1000) / CHECKS)} µs/check (server process alone); peak server RSS ${fmt(r.rssMb)} MB`,
      );
    }
  }
}
if (!SMOKE && !process.argv.includes("--no-hurl") && !process.argv.includes("--no-http")) {
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const h = await hurl(10);
    if (h === null) {
      console.log("hurl   not available here (scripts/hurl.sh --fetch failed): left out");
      break;
    }
    rates.push(h.perSec);
    console.log(
      `hurl   10 jobs, round ${round + 1}: ${fmt(h.wallMs)} ms wall, ${fmt(h.perSec)} checks/s${h.failed ? ", SOME CHECKS FAILED" : ", every check passed"}`,
    );
  }
  if (rates.length > 0) {
    const h = median(rates);
    console.log(`hurl   10 jobs: median ${fmt(h)} checks/s (${fmt(h / bareMedian, 2)}x bare)`);
    for (const { server, concurrency: c, median: m, own } of svcMedians)
      console.log(
        `ratio${label(server)} concurrency ${String(c).padStart(3)}: svc/hurl(10 jobs) ${fmt(m / h, 2)} client-seen, ${fmt(own / h, 2)} by the server's own wall`,
      );
  }
}
if (!SMOKE && !process.argv.includes("--no-newman") && !process.argv.includes("--no-http")) {
  const ones: number[] = [];
  const tens: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const one = await newman(1);
    ones.push(one.perSec);
    console.log(`newman one at a time, round ${round + 1}: ${fmt(one.wallMs)} ms wall, ${fmt(one.perSec, 1)} checks/s, ${one.failures} failed assertions`);
    const ten = await newman(10);
    tens.push(ten.perSec);
    console.log(`newman 10 at once, round ${round + 1}   : ${fmt(ten.wallMs)} ms wall, ${fmt(ten.perSec, 1)} checks/s, ${ten.failures} failed assertions`);
  }
  const one = median(ones);
  const ten = median(tens);
  console.log(`newman medians: one at a time ${fmt(one, 1)} checks/s, 10 at once ${fmt(ten, 1)} checks/s`);
  for (const { server, concurrency: c, median: m } of svcMedians)
    console.log(
      `ratio${label(server)} concurrency ${String(c).padStart(3)}: svc/bare ${fmt(m / bareMedian, 2)}, svc/newman(10 at once) ${fmt(m / ten, 1)}, svc/newman(one) ${fmt(m / one, 1)}`,
    );
} else {
  for (const { server, concurrency: c, median: m } of svcMedians)
    console.log(`ratio${label(server)} concurrency ${String(c).padStart(3)}: svc/bare ${fmt(m / bareMedian, 2)}`);
}
if (BROWSER) {
  for (const c of CONCURRENCIES) {
    for (const server of SERVERS) {
      const r = await svcRun(server, c, true);
      r.rounds.forEach((x, i) => {
        console.log(
          `browser${label(server)} concurrency ${c}, round ${i + 1}: ${BROWSER_CHECKS} automations (goto + expect text) in ${fmt(x.wallMs)} ms, ${fmt(x.perSec * 60)} checks/min, ${x.passed}/${BROWSER_CHECKS} passed, server CPU ${fmt(x.serverCpuMs)} ms (${fmt(x.serverCpuMs / BROWSER_CHECKS)} ms/check)`,
        );
      });
      console.log(`browser${label(server)} concurrency ${c}: median ${fmt(median(r.rounds.map((x) => x.perSec * 60)))} checks/min`);
    }
  }
}
await target.stop();
rmSync(work, { recursive: true, force: true });
