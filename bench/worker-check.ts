// The CPU a run worker spends per http check (one request, three assertions), beside a bare fetch loop doing the
// same checks by hand. The target runs in a separate process so its CPU is not counted. Side by side, alternating,
// medians of the rounds:
//   bare    fetch + res.json() + the three checks, 10 at once (this process's CPU)
//   execute executeRun on the same checks as a worker gets them, 10 at once, plus the worker's JSON.stringify of
//           {steps, artifacts} (this process's CPU)
//   worker  the real worker process (src/runner/worker-main.ts) fed over IPC as the pool feeds it, 10 in flight
//           (the worker's CPU from /proc; the parent's is not counted)
// Usage: bun bench/worker-check.ts [--smoke] [--checks 3000] [--rounds 5] [--no-worker] [--worker-prof DIR]
// Profiles: bun --cpu-prof --cpu-prof-dir DIR bench/worker-check.ts --no-worker (this process), --worker-prof DIR (the
// worker's, written when it exits).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readRunSpec } from "../src/core/shared/columns";
import { SharedBrowser } from "../src/runner/chromium";
import { type ExecutionSettings, executeRun, type RunJob } from "../src/runner/execute-run";
import { batchedSender, type FromWorker, type ToWorker, type WireJob } from "../src/runner/worker-protocol";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
/** `--smoke`: a short run that only shows the benchmark still works (CI runs it). */
const SMOKE = process.argv.includes("--smoke");
const CHECKS = Number(arg("checks", SMOKE ? "200" : "3000"));
const ROUNDS = Math.max(3, Number(arg("rounds", "5")));
const WORKER = !process.argv.includes("--no-worker");
const WORKER_PROF = process.argv.includes("--worker-prof") ? arg("worker-prof", "prof") : null;
const AT_ONCE = 10;
const ROOT = join(import.meta.dir, "..");

const TARGET = `
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const m = /^\\/items\\/(\\d+)$/.exec(new URL(req.url).pathname);
    if (!m) return new Response("not found", { status: 404 });
    const id = Number(m[1]);
    return new Response(JSON.stringify({ id, name: "item " + id }), { headers: { "content-type": "application/json" } });
  },
});
console.log("http://127.0.0.1:" + server.port);
`;
const target = Bun.spawn(["bun", "-e", TARGET], { stdout: "pipe", stderr: "inherit" });
const reader = target.stdout.getReader();
let firstLine = "";
while (!firstLine.includes("\n")) {
  const { value, done } = await reader.read();
  if (done) throw new Error("the target did not start");
  firstLine += new TextDecoder().decode(value);
}
const BASE_URL = firstLine.trim();

const STEP = {
  request: { url: "/items/1" },
  expect: [{ status: 200 }, { json: "$.id", equals: 1 }, { header: "content-type", contains: "application/json" }],
};
// As the server snapshots an automation saved with the defaults: its timeout_ms is runner.default_timeout_ms.
const specText = JSON.stringify({ kind: "http", steps: [STEP], timeout_ms: 300_000, retries: 0 });
const environment = { name: "local", variables: { BASE_URL }, secrets: {}, unreadableSecrets: [], secretHosts: null };
// config/schema.ts: runner.response_excerpt_bytes and runner.max_response_bytes defaults.
const settings: ExecutionSettings = { defaultTimeoutMs: 30_000, excerptBytes: 8192, maxResponseBytes: 32 * 1024 * 1024 };
const browser = new SharedBrowser(undefined);
let seq = 0;

/** Runs `n` checks with `one`, `AT_ONCE` at a time. */
async function pool(n: number, one: () => Promise<void>): Promise<void> {
  let left = n;
  const lane = async () => {
    while (left > 0) {
      left--;
      await one();
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
}

async function bareCheck(): Promise<void> {
  const res = await fetch(`${BASE_URL}/items/1`);
  const body = (await res.json()) as { id: number };
  const ok = res.status === 200 && body.id === 1 && (res.headers.get("content-type") ?? "").includes("application/json");
  if (!ok) throw new Error("bare check failed");
}

async function executeCheck(): Promise<void> {
  const job: RunJob = {
    id: `run-${++seq}`,
    automationId: "auto-1",
    spec: readRunSpec(specText),
    specText,
    environmentId: "env-1",
    environment: { ...environment, variables: { ...environment.variables } },
  };
  // As worker-main.ts calls it: the run's controller is handed over with its signal.
  const controller = new AbortController();
  const result = await executeRun(job, { signal: controller.signal, controller, browser, settings, saveArtifact: async () => undefined });
  const json = JSON.stringify({ steps: result.steps, artifacts: result.artifacts });
  if (result.status !== "passed") throw new Error(`executeRun: ${result.status} ${result.error ?? result.failure ?? json}`);
}

const cpuNow = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

async function inProcess(one: () => Promise<void>): Promise<number> {
  const c0 = cpuNow();
  await pool(CHECKS, one);
  return (cpuNow() - c0) / CHECKS;
}

// The real worker process, fed as worker-pool.ts feeds it: batches of messages, a new run as each one ends.
const TICK_US = 1e6 / 100;
function statCpuUs(path: string): number {
  const stat = readFileSync(path, "utf8");
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}
const procCpuUs = (pid: number) => statCpuUs(`/proc/${pid}/stat`);

/** CPU by thread name (the JS thread is the process's own name; "HTTP Client", "HeapHelper", "JITWorker" …). */
function threadCpuUs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = tid === String(pid) ? "JS" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\d+$/, "");
      out.set(name, (out.get(name) ?? 0) + statCpuUs(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}
const byThread = new Map<string, number>();

interface Worker {
  pid: number;
  send(batch: ToWorker[]): void;
  onDone: ((id: string, status: string) => void) | null;
  kill(): void;
}

async function startWorker(): Promise<Worker> {
  let ready: () => void = () => undefined;
  const readyP = new Promise<void>((r) => {
    ready = r;
  });
  const w: Worker = { pid: 0, send: () => undefined, onDone: null, kill: () => undefined };
  const profile = WORKER_PROF ? ["--cpu-prof", "--cpu-prof-interval=100", "--cpu-prof-dir", WORKER_PROF] : [];
  const proc = Bun.spawn(["bun", ...profile, join(ROOT, "src/runner/worker-main.ts")], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
    serialization: "json",
    ipc: (batch: FromWorker[]) => {
      for (const m of batch) {
        if (m.t === "ready") ready();
        else if (m.t === "done") w.onDone?.(m.id, m.result.status);
      }
    },
  });
  w.pid = proc.pid;
  // Closing the channel is how the pool stops a worker: it exits on its own (writing its profile, if any).
  w.kill = () => proc.disconnect();
  const post = batchedSender<ToWorker>(queueMicrotask, (b) => proc.send(b));
  w.send = (batch) => {
    for (const m of batch) post(m);
  };
  w.send([{ t: "init", browserPath: undefined, logLevel: "error", probePath: null }]);
  await readyP;
  return w;
}

async function inWorker(w: Worker): Promise<number> {
  const wire = (): WireJob => ({
    id: `run-${++seq}`,
    automationId: "auto-1",
    specText,
    specReadable: true,
    environmentId: "env-1",
    environment,
  });
  const c0 = procCpuUs(w.pid);
  const t0 = threadCpuUs(w.pid);
  await new Promise<void>((resolve, reject) => {
    let sent = 0;
    let done = 0;
    w.onDone = (_id, status) => {
      if (status !== "passed") reject(new Error(`worker run: ${status}`));
      done++;
      if (done === CHECKS) resolve();
      else if (sent < CHECKS) {
        sent++;
        w.send([{ t: "run", job: wire(), settings }]);
      }
    };
    const first: ToWorker[] = [];
    for (; sent < Math.min(AT_ONCE, CHECKS); sent++) first.push({ t: "run", job: wire(), settings });
    w.send(first);
  });
  w.onDone = null;
  for (const [name, us] of threadCpuUs(w.pid)) byThread.set(name, (byThread.get(name) ?? 0) + (us - (t0.get(name) ?? 0)) / CHECKS);
  return (procCpuUs(w.pid) - c0) / CHECKS;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

const worker = WORKER ? await startWorker() : null;
// Warm up every path (JIT, connection pools, memos) before measuring.
await pool(500, bareCheck);
await pool(500, executeCheck);
if (worker) await inWorker(worker);

const bare: number[] = [];
const exec: number[] = [];
const viaWorker: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  // Alternate the order so neither path always runs first.
  const order = round % 2 === 0 ? ["bare", "execute", "worker"] : ["worker", "execute", "bare"];
  const line: string[] = [];
  for (const which of order) {
    if (which === "bare") bare.push(await inProcess(bareCheck));
    else if (which === "execute") exec.push(await inProcess(executeCheck));
    else if (worker) viaWorker.push(await inWorker(worker));
  }
  line.push(`bare ${bare.at(-1)?.toFixed(1)} µs`, `execute ${exec.at(-1)?.toFixed(1)} µs`);
  if (worker) line.push(`worker ${viaWorker.at(-1)?.toFixed(1)} µs`);
  console.log(`round ${round + 1}: ${line.join(", ")} CPU per check (${CHECKS} checks)`);
}
const mb = median(bare);
const me = median(exec);
console.log(`median CPU per check: bare ${mb.toFixed(1)} µs, executeRun ${me.toFixed(1)} µs, executeRun/bare ${(me / mb).toFixed(2)}`);
if (worker) {
  const mw = median(viaWorker);
  console.log(`median CPU per check of the worker process: ${mw.toFixed(1)} µs, worker/bare ${(mw / mb).toFixed(2)}`);
  const threads = [...byThread].filter(([, us]) => us >= 0.05 * ROUNDS).sort((a, b) => b[1] - a[1]);
  console.log(`the worker's CPU per check by thread (mean): ${threads.map(([name, us]) => `${name} ${(us / ROUNDS).toFixed(1)} µs`).join(", ")}`);
  worker.kill();
  await Bun.sleep(WORKER_PROF ? 1500 : 0);
}
target.kill();
