// Scheduler drift and alert latency, in one in-process `svc serve` with a fresh data directory.
// Drift: 100 schedules every 10 s, each starting one run of an http automation; for every tick, the time from
// its due time to its run being queued (fired − due), over several rounds: p50, p95, max.
// Alert latency: a signed webhook channel to a local receiver, an automation alternating failing and passing;
// for every state change, the time from the run's end (finished_at) to the receiver having the delivery.
// Usage: bun bench/schedules.ts [--schedules 100] [--rounds 3] [--alerts 20] [--smoke]   (--smoke: 10 schedules, 1 round, 4 alerts)
import { flag, has } from "./args";
import { rawSqlite, startTestServer } from "../test/helpers/server";
import { startTargetApp } from "../test/helpers/target-app";

const smoke = has("smoke");
const SCHEDULES = flag("schedules", smoke ? 10 : 100);
const ROUNDS = flag("rounds", smoke ? 1 : 3);
const ALERTS = flag("alerts", smoke ? 4 : 20);
const INTERVAL = 10;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
};
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p95 ${pct(xs, 95).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;

const target = startTargetApp();
const arrivals = new Map<string, number>();
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const at = Date.now();
    await req.text();
    arrivals.set(req.headers.get("x-svc-delivery") ?? "", at);
    return new Response(null, { status: 204 });
  },
});
const s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 8 } });
const call = async (method: string, path: string, body?: unknown) => {
  const res = await s.call(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
};

try {
  await call("POST", "/projects", { name: "bench" });
  await call("POST", "/projects/bench/environments", { name: "local", variables: { BASE_URL: target.url } });
  const steps = (status: number) => [{ request: { url: "/health" }, expect: [{ status }] }];
  const auto = (await call("POST", "/projects/bench/automations", { name: "health", kind: "http", environment: "local", steps: steps(200) })) as { id: string };

  // ---- drift ----
  const ids: string[] = [];
  for (let i = 0; i < SCHEDULES; i++) {
    const sch = (await call("POST", "/projects/bench/schedules", { name: `s${i}`, target: { automation: auto.id }, interval_seconds: INTERVAL })) as {
      id: string;
    };
    ids.push(sch.id);
  }
  const wanted = SCHEDULES * ROUNDS;
  const fired = () => (rawSqlite(s.server.core).query("SELECT COUNT(*) AS n FROM schedule_fires WHERE run_id IS NOT NULL").get() as { n: number }).n;
  const deadline = Date.now() + (ROUNDS + 2) * INTERVAL * 1000;
  while (fired() < wanted && Date.now() < deadline) await Bun.sleep(200);
  for (const id of ids) await call("PATCH", `/projects/bench/schedules/${id}`, { enabled: false });
  const rows = rawSqlite(s.server.core).query("SELECT f.due_at, r.created_at FROM schedule_fires f JOIN runs r ON r.id = f.run_id ORDER BY f.due_at").all() as {
    due_at: string;
    created_at: string;
  }[];
  const drift = rows.map((r) => Date.parse(r.created_at) - Date.parse(r.due_at));
  console.log(`schedules       ${SCHEDULES} every ${INTERVAL} s, ${rows.length} ticks fired (wanted ${wanted})`);
  console.log(`drift (queued − due)  ${fmt(drift)}`);

  // ---- alert latency ----
  await call("POST", "/projects/bench/alert-channels", { name: "hook", kind: "webhook", url: `http://127.0.0.1:${receiver.port}/`, secret: "bench-secret-1" });
  const latency: number[] = [];
  for (let i = 0; i < ALERTS; i++) {
    await call("PATCH", `/projects/bench/automations/${auto.id}`, { steps: steps(i % 2 === 0 ? 418 : 200) });
    const run = (await call("POST", `/projects/bench/automations/${auto.id}/run`, {})) as { id: string };
    let done: { status: string; finished_at: string | null } = { status: "queued", finished_at: null };
    while (done.finished_at === null) {
      await Bun.sleep(5);
      done = (await call("GET", `/projects/bench/runs/${run.id}`)) as typeof done;
    }
    const list = (await call("GET", "/projects/bench/alert-channels/hook/deliveries?limit=1")) as { data: { delivery_id: string }[] };
    const id = list.data[0]?.delivery_id ?? "";
    const until = Date.now() + 10_000;
    while (!arrivals.has(id) && Date.now() < until) await Bun.sleep(2);
    const at = arrivals.get(id);
    if (at === undefined) throw new Error(`delivery ${id} did not arrive`);
    latency.push(at - Date.parse(done.finished_at));
  }
  console.log(`alert latency (run end → received)  ${fmt(latency)}`);
} finally {
  await s.stop();
  await target.stop();
  await receiver.stop(true);
}
