// The reads that give many automations' health at once: get_dashboard (every automation of the workspace's first
// projects) and a page of list_automations. A project of --automations (1,000) http automations, each run --runs
// (5) times as group runs against a local target, then each read timed uncached (a write before each one moves the
// database's version, so the read cache cannot answer). Prints the median and p95 of each read in ms.
// Runs on SQLite, or on a throw-away PostgreSQL database with SVC_TEST_BACKEND=postgres (as the tests; analysed
// after filling, as autovacuum keeps a database in use).
// Usage: bun bench/dashboard.ts [--automations 1000] [--runs 5] [--rounds 20] [--smoke]
import { json } from "../test/helpers/runs";
import { startTestServer } from "../test/helpers/server";
import { startCountingTarget } from "../test/helpers/target-app";
import { flag, has } from "./args";

const SMOKE = has("smoke");
const AUTOMATIONS = flag("automations", SMOKE ? 40 : 1000);
const RUNS = flag("runs", SMOKE ? 2 : 5);
const ROUNDS = flag("rounds", SMOKE ? 3 : 20);

const target = startCountingTarget();
const s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 32 } });
try {
  await json(await s.call("POST", "/projects", { name: "dash" }), 201);
  const env = await json<{ id: string }>(await s.call("POST", "/projects/dash/environments", { name: "local", variables: { BASE_URL: target.url } }), 201);
  const ids: string[] = [];
  for (let i = 0; i < AUTOMATIONS; i++) {
    const body = { name: `check ${i}`, kind: "http", environment: env.id, steps: [{ request: { url: `/a/${i % 7}` }, expect: [{ status: 200 }] }] };
    ids.push((await json<{ id: string }>(await s.call("POST", "/projects/dash/automations", body), 201)).id);
  }
  const group = await json<{ id: string }>(await s.call("POST", "/projects/dash/groups", { name: "all", automation_ids: ids }), 201);
  for (let r = 0; r < RUNS; r++) {
    const gr = await json<{ id: string }>(await s.call("POST", `/projects/dash/groups/${group.id}/run`, {}), 202);
    for (let status = "queued"; status === "queued" || status === "running"; ) {
      status = (await json<{ status: string }>(await s.call("GET", `/projects/dash/group-runs/${gr.id}?wait=30`))).status;
    }
  }
  // As autovacuum keeps them on a database in use: without statistics, PostgreSQL plans these reads for an empty table.
  if (s.databaseUrl) await s.sql("analyze");
  const timed = async (path: string) => {
    const ms: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await json(await s.call("PATCH", "/projects/dash", { description: `round ${i}` }));
      const t0 = performance.now();
      await json(await s.call("GET", path));
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => (ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0).toFixed(1);
    return `median ${at(0.5)} ms, p95 ${at(0.95)} ms`;
  };
  console.log(`backend: ${s.databaseUrl ? "postgres" : "sqlite"}; ${AUTOMATIONS} automations, ${RUNS} runs each`);
  console.log(`get_dashboard (all ${AUTOMATIONS}):        ${await timed("/dashboard")}`);
  console.log(`list_automations (a page of 200):  ${await timed("/projects/dash/automations?limit=200")}`);
} finally {
  await s.stop();
  target.stop();
}
