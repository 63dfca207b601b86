// Runner soak: 10,000 runs through the queue of one `svc serve` (group runs queued back to back plus single
// run_automation calls) against a local target that counts hits per automation. Checks that every run reaches
// a terminal state, none is left queued or running, none was executed twice (target hits per automation == its
// runs, every passed run has exactly one attempt). A run the engine claimed ahead and sent back to the queue
// unstarted (another run was queued meanwhile) is claimed again: those are counted, not failed. Prints wall time, runs/s and peak
// server RSS; exits non-zero when a check fails.
// --kill: the target answers after 20 ms, the server is killed with SIGKILL once 30% of the runs have ended and
// started again on the same data: runs in flight end `error` (interrupted by server restart), the rest still run
// exactly once.
// Usage: bun bench/soak.ts [--runs 10000] [--automations 100] [--concurrency 4] [--kill] [--smoke]   (--smoke: ~300 runs)
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { startCountingTarget } from "../test/helpers/target-app";
import { flag, has } from "./args";

const smoke = has("smoke");
const kill = has("kill");
const AUTOMATIONS = flag("automations", smoke ? 20 : 100);
const TOTAL = flag("runs", smoke ? 300 : 10_000);
const CONCURRENCY = flag("concurrency", 4);
/** Each automation also gets this many single runs (run_automation), the rest of the total comes as group runs. */
const SINGLES_PER_AUTOMATION = smoke ? 1 : 5;
const GROUP_ROUNDS = Math.max(1, Math.round((TOTAL - AUTOMATIONS * SINGLES_PER_AUTOMATION) / AUTOMATIONS));
const EXPECTED_PER_AUTOMATION = GROUP_ROUNDS + SINGLES_PER_AUTOMATION;
const EXPECTED = AUTOMATIONS * EXPECTED_PER_AUTOMATION;
const DEADLINE_MS = smoke ? 120_000 : 1_800_000;
const INTERRUPTED = "interrupted by server restart";

const root = resolve(import.meta.dir, "..");
const svcCmd = existsSync(join(root, "dist/svc")) ? [join(root, "dist/svc")] : ["bun", join(root, "src/main.ts")];

// The target: one path per automation, counted (when the request arrives, before any delay).
const target = startCountingTarget(() => (kill ? 20 : 0));
const { hits } = target;

async function run(cmd: string[], cwd: string, env: Record<string, string | undefined>): Promise<string> {
  const p = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")}: ${await new Response(p.stderr).text()}`);
  return out.trim();
}

const procStatus = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0") / 1024;

const dir = mkdtempSync(join(tmpdir(), "svc-soak-"));
const dbPath = join(dir, "svc-data", "svc.sqlite");
const env = { ...process.env, SVC_RATE_LIMIT_ENABLED: "false", SVC_LOG_LEVEL: "warn", SVC_RUNNER_CONCURRENCY: String(CONCURRENCY) };
let logText = "";

async function startSvc(): Promise<{ proc: Subprocess<"ignore", "ignore", "pipe">; url: string }> {
  const proc = Bun.spawn([...svcCmd, "serve", "--port", "0"], { cwd: dir, env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const reader = proc.stderr.getReader();
  let url = "";
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`svc exited: ${logText}`);
    logText += new TextDecoder().decode(value);
    url = /svc listening on (\S+)/.exec(logText.slice(-2000))?.[1] ?? "";
  }
  // Keep the log (warnings and errors only) to show it if a check fails.
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (logText.length < 200_000) logText += new TextDecoder().decode(value);
    }
  })();
  return { proc, url };
}

await run([...svcCmd, "admin", "create-user", "--email", "soak@svc.test", "--name", "Soak", "--workspace", "soak"], dir, env);
const key = await run([...svcCmd, "admin", "create-key", "--email", "soak@svc.test", "--workspace", "soak"], dir, env);
let svc = await startSvc();

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${svc.url}/api/v1/ops${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Run counts by status, read from the database file itself (read-only, beside the server's WAL connection). */
function countByStatus(): Record<string, number> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db.query<{ status: string; n: number }, []>("SELECT status, count(*) AS n FROM runs GROUP BY status").all();
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  } finally {
    db.close();
  }
}
const inFlight = (c: Record<string, number>) => (c.queued ?? 0) + (c.running ?? 0);

const failures: string[] = [];
const fmt = (n: number, d = 0) => n.toFixed(d);
let exitCode = 0;
try {
  await call("POST", "/projects", { name: "soak", slug: "soak" });
  await call("POST", "/projects/soak/environments", { name: "local", variables: { BASE_URL: target.url } });
  const ids: string[] = [];
  for (let i = 0; i < AUTOMATIONS; i++) {
    const a = await call<{ id: string }>("POST", "/projects/soak/automations", {
      name: `soak ${i}`,
      kind: "http",
      environment: "local",
      steps: [{ request: { url: `/hit/${i}` }, expect: [{ status: 200 }, { json: "$.ok", equals: true }] }],
    });
    ids.push(a.id);
  }
  const group = await call<{ id: string }>("POST", "/projects/soak/groups", { name: "soak", automation_ids: ids });
  const rssStart = procStatus(svc.proc.pid, "VmRSS");

  console.log(
    `runner soak: ${EXPECTED} runs (${GROUP_ROUNDS} group runs of ${AUTOMATIONS} automations + ${SINGLES_PER_AUTOMATION} single runs each), runner concurrency ${CONCURRENCY}${kill ? ", SIGKILL and restart at 30%" : ""}`,
  );
  const t0 = performance.now();
  // Submitters run while the engine drains the queue: the queue grows and shrinks under both at once.
  const jobs: (() => Promise<unknown>)[] = [];
  for (let r = 0; r < GROUP_ROUNDS; r++) jobs.push(() => call("POST", `/projects/soak/groups/${group.id}/run`, {}));
  for (let s = 0; s < SINGLES_PER_AUTOMATION; s++) for (const id of ids) jobs.push(() => call("POST", `/projects/soak/automations/${id}/run`, {}));
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++];
        if (job) await job();
      }
    }),
  );
  const submittedMs = performance.now() - t0;

  let counts = countByStatus();
  let peakQueued = counts.queued ?? 0;
  let peakRss = 0;
  let killedAt: Record<string, number> | null = null;
  while (inFlight(counts) > 0) {
    if (performance.now() - t0 > DEADLINE_MS) {
      failures.push(`runs still in progress after ${DEADLINE_MS / 1000} s: ${JSON.stringify(counts)}`);
      break;
    }
    await Bun.sleep(kill && !killedAt ? 10 : 200);
    counts = countByStatus();
    peakQueued = Math.max(peakQueued, counts.queued ?? 0);
    if (kill && !killedAt && EXPECTED - inFlight(counts) >= EXPECTED * 0.3) {
      peakRss = procStatus(svc.proc.pid, "VmHWM");
      svc.proc.kill("SIGKILL");
      await svc.proc.exited;
      killedAt = countByStatus();
      svc = await startSvc();
    }
  }
  const wallMs = performance.now() - t0;
  const rssEnd = procStatus(svc.proc.pid, "VmRSS");
  peakRss = Math.max(peakRss, procStatus(svc.proc.pid, "VmHWM"));
  if (kill && !killedAt) failures.push("the queue drained before the server could be killed: raise --runs");

  // The checks, from the database and the target's counters.
  const db = new Database(dbPath, { readonly: true });
  const total = db.query<{ n: number }, []>("SELECT count(*) AS n FROM runs").get()?.n ?? 0;
  const nonTerminal =
    db.query<{ n: number }, []>("SELECT count(*) AS n FROM runs WHERE status NOT IN ('passed','failed','error','timed_out','cancelled')").get()?.n ?? 0;
  const unexpected = db
    .query<{ status: string; error: string | null }, [string]>(
      "SELECT status, error FROM runs WHERE status != 'passed' AND NOT (status = 'error' AND error = ?1) LIMIT 5",
    )
    .all(INTERRUPTED);
  // Ending an interrupted run moves its claim on once (a fence against a late finish by the killed process): claim 2.
  const multiClaim =
    db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM runs WHERE claim != 1 AND NOT (status = 'error' AND error = ? AND claim = 2)").get(INTERRUPTED)
      ?.n ?? 0;
  const multiAttempt = db.query<{ n: number }, []>("SELECT count(*) AS n FROM runs WHERE status = 'passed' AND json_array_length(attempts) != 1").get()?.n ?? 0;
  const perAutomation = db
    .query<{ automation_id: string; n: number; passed: number; interrupted: number }, [string]>(
      "SELECT automation_id, count(*) AS n, sum(status = 'passed') AS passed, sum(status = 'error' AND error = ?1) AS interrupted FROM runs GROUP BY automation_id",
    )
    .all(INTERRUPTED);
  db.close();
  const interrupted = perAutomation.reduce((a, p) => a + p.interrupted, 0);
  const totalHits = [...hits.values()].reduce((a, b) => a + b, 0);
  // A passed run hit the target exactly once; an interrupted one at most once.
  const wrongHits = ids
    .map((id, i) => {
      const p = perAutomation.find((x) => x.automation_id === id);
      return { i, runs: p?.n ?? 0, passed: p?.passed ?? 0, interrupted: p?.interrupted ?? 0, hits: hits.get(`/hit/${i}`) ?? 0 };
    })
    .filter((x) => x.runs !== EXPECTED_PER_AUTOMATION || x.hits < x.passed || x.hits > x.passed + x.interrupted);

  if (total !== EXPECTED) failures.push(`${total} runs in the database, expected ${EXPECTED}`);
  if (nonTerminal > 0) failures.push(`${nonTerminal} runs not in a terminal state`);
  if (unexpected.length > 0) failures.push(`runs neither passed nor interrupted by the restart, e.g. ${JSON.stringify(unexpected)}`);
  if (!kill && interrupted > 0) failures.push(`${interrupted} runs interrupted without a restart`);
  if (multiAttempt > 0) failures.push(`${multiAttempt} passed runs without exactly one attempt`);
  if (!kill && totalHits !== EXPECTED) failures.push(`the target was hit ${totalHits} times for ${EXPECTED} runs`);
  if (wrongHits.length > 0) failures.push(`automations whose runs and hits disagree: ${JSON.stringify(wrongHits.slice(0, 5))}`);

  console.log(`  submitted       ${jobs.length} requests in ${fmt(submittedMs)} ms; peak queued seen ${peakQueued}`);
  if (killedAt)
    console.log(`  killed          SIGKILL with ${JSON.stringify(killedAt)}; restarted on the same data; ${interrupted} runs ended "${INTERRUPTED}"`);
  console.log(`  runs            ${total} in the database: ${JSON.stringify(countByStatus())}`);
  console.log(`  wall time       ${fmt(wallMs)} ms  (${fmt((total / wallMs) * 1000, 1)} runs/s, from the first submit to the last terminal run)`);
  console.log(
    `  target hits     ${totalHits} (expected ${kill ? `${EXPECTED - interrupted}..${EXPECTED}` : EXPECTED}); automations with hits != runs: ${wrongHits.length}`,
  );
  console.log(
    `  claims/attempts runs claimed again after going back to the queue unstarted: ${multiClaim}; passed runs without exactly one attempt: ${multiAttempt}`,
  );
  console.log(`  server RSS MB   before ${fmt(rssStart)}  after ${fmt(rssEnd)}  peak ${fmt(peakRss)}`);
  console.log(
    failures.length === 0 ? "  result          every run terminal, none twice, none left queued/running" : `  FAILED\n    ${failures.join("\n    ")}`,
  );
  if (failures.length > 0) {
    console.error(logText.slice(-4000));
    exitCode = 1;
  }
} catch (e) {
  console.error(`soak aborted: ${(e as Error).message}\n${logText.slice(-4000)}`);
  exitCode = 1;
} finally {
  svc.proc.kill("SIGTERM");
  await svc.proc.exited;
  await target.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
