// The server's own part of a group run, in one process with no workers and no HTTP: starting a group run of N http
// automations (its runs queued), claiming them as the engine does, and recording them finished with a typical
// step result, in finish batches. Prints each phase's time and the CPU per check, round by round: the figure to
// compare between two trees (run it in each, one after the other), since workers and the target are left out.
// Usage: bun bench/run-recording.ts [--checks 1000] [--batch 64] [--rounds 5] [--smoke] (SVC_BENCH_KEEP=1 keeps the
// data directory, to look at the database afterwards)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { openCore } from "../src/core";
import { createUserInWorkspace } from "../src/core/access/users";
import { callOperation } from "../src/core/call";
import type { Principal } from "../src/core/context";
import { claimQueuedRuns, finishRuns, type RunOutcome } from "../src/core/runs/queue";

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const SMOKE = process.argv.includes("--smoke");
const CHECKS = Number(arg("checks", SMOKE ? "100" : "1000"));
const BATCH = Number(arg("batch", "64"));
const ROUNDS = Number(arg("rounds", SMOKE ? "2" : "5"));

const dataDir = mkdtempSync(join(tmpdir(), "svc-bench-recording-"));
// runner.local off: nothing but this script claims the runs.
const core = await openCore(loadConfig({ env: {}, flags: { data_dir: dataDir, log_level: "silent", runner: { local: false } } }));
const owner = await createUserInWorkspace(core.db, { email: "bench@acme.test", name: "Bench", workspace: "acme", role: "owner" });
const as: Principal = { userId: owner.userId, workspaceId: owner.workspaceId, role: "owner", via: "key", keyId: null, trigger: "api" };
await callOperation(core, as, "createProject", { body: { name: "bench", slug: "bench" } });
await callOperation(core, as, "createEnvironment", { params: { project: "bench" }, body: { name: "local", variables: { BASE_URL: "http://127.0.0.1:9" } } });
const ids: string[] = [];
for (let n = 0; n < CHECKS; n++) {
  const a = (await callOperation(core, as, "createAutomation", {
    params: { project: "bench" },
    body: {
      name: `check ${n}`,
      kind: "http",
      environment: "local",
      steps: [
        {
          request: { url: `/items/${(n % 3) + 1}` },
          expect: [{ status: 200 }, { json: "$.id", equals: (n % 3) + 1 }, { header: "content-type", contains: "application/json" }],
        },
      ],
    },
  })) as { id: string };
  ids.push(a.id);
}
const group = (await callOperation(core, as, "createGroup", { params: { project: "bench" }, body: { name: "bench", automation_ids: ids } })) as { id: string };
// What a worker sends back for one check: one step, its request and response excerpt, three assertions.
const resultsJson = JSON.stringify({
  steps: [
    {
      index: 0,
      name: "GET /items/1",
      status: "passed",
      duration_ms: 1,
      request: { method: "GET", url: "http://127.0.0.1:9/items/1", headers: {} },
      response: { status: 200, headers: { "content-type": "application/json" }, body_excerpt: '{"id":1,"name":"one"}', size_bytes: 21 },
      assertions: [
        { kind: "status", expected: 200, actual: 200, passed: true },
        { kind: "json", path: "$.id", expected: 1, actual: 1, passed: true },
        { kind: "header", name: "content-type", expected: "application/json", actual: "application/json", passed: true },
      ],
    },
  ],
  artifacts: [],
});
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
console.log(`svc run recording benchmark: a group run of ${CHECKS} checks, claimed and finished ${BATCH} at a time, in one process`);
for (let round = 0; round < ROUNDS; round++) {
  const c0 = cpu();
  const t0 = performance.now();
  await callOperation(core, as, "runGroup", { params: { project: "bench", groupId: group.id }, body: {} });
  const startMs = performance.now() - t0;
  let claimMs = 0;
  let finishMs = 0;
  let n = 0;
  for (;;) {
    const c = performance.now();
    const runs = await claimQueuedRuns(core, BATCH);
    claimMs += performance.now() - c;
    if (runs.length === 0) break;
    n += runs.length;
    const finishedAt = new Date().toISOString();
    const outcomes: RunOutcome[] = runs.map((r) => ({
      id: r.id,
      claim: r.claim,
      automationId: r.automationId,
      status: "passed",
      startedAt: r.startedAt,
      finishedAt,
      durationMs: 1,
      error: null,
      summary: { steps: 1, passed: 1, failed: 0, skipped: 0 },
      resultsJson,
      attempts: [{ attempt: 1, status: "passed", error: null, message: null, duration_ms: 1 }],
    }));
    const f = performance.now();
    await finishRuns(core, outcomes);
    finishMs += performance.now() - f;
  }
  const used = cpu() - c0;
  console.log(
    `round ${round + 1} (${round === 0 ? "cold" : "warm"}): start ${startMs.toFixed(1)} ms, claims ${claimMs.toFixed(1)} ms, finishes ${finishMs.toFixed(1)} ms; ${n} runs, CPU ${(used / n).toFixed(0)} µs/check`,
  );
}
await core.close();
if (process.env.SVC_BENCH_KEEP) console.log(`kept ${dataDir}`);
else rmSync(dataDir, { recursive: true, force: true });
