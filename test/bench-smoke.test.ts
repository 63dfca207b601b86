// The benchmarks still run: each is started in its short smoke mode and must print its figures. Figures are
// read by people, never asserted here.
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";

const root = resolve(import.meta.dir, "..");

async function smoke(script: string, ...extra: string[]): Promise<string> {
  const proc = Bun.spawn(["bun", resolve(root, script), "--smoke", ...extra], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${script} exited ${code}: ${err.slice(-2000)}`);
  return out;
}

describe("benchmarks (smoke runs)", () => {
  test("bench/api.ts prints throughput and latency for svc and the bare server", async () => {
    const out = await smoke("bench/api.ts");
    expect(out).toMatch(/svc {2}GET \/projects .*\d+/);
    expect(out).toContain("svc / bare");
  }, 120_000);
  test("bench/runner.ts runs a group run of checks through svc beside the bare loop, every run passed and recorded", async () => {
    const out = await smoke("bench/runner.ts");
    expect(out).toMatch(/bare +10 fetches at once: median \d+ checks\/s/);
    expect(out).toMatch(/concurrency +4, round 1 \(cold\): .* 50\/50 runs passed, 50\/50 step results with 3 assertions recorded/);
    expect(out).toMatch(/concurrency +4: median \d+ checks\/s \(\d+\.\d\dx bare\), .*server's own wall/);
  });
  test("bench/run-recording.ts starts, claims and finishes a group run in one process and prints the CPU per check", async () => {
    const out = await smoke("bench/run-recording.ts");
    expect(out).toMatch(/round 2 \(warm\): start [\d.]+ ms, claims [\d.]+ ms, finishes [\d.]+ ms; 100 runs, CPU \d+ µs\/check/);
  }, 120_000);
  test("bench/worker-check.ts prints a run worker's CPU per check beside a bare fetch loop", async () => {
    const out = await smoke("bench/worker-check.ts");
    expect(out).toMatch(/median CPU per check: bare [\d.]+ µs, executeRun [\d.]+ µs, executeRun\/bare [\d.]+/);
    expect(out).toMatch(/median CPU per check of the worker process: [\d.]+ µs/);
  }, 120_000);

  test("bench/retention.ts prunes by age and by count in batches, keeping the roll-ups", async () => {
    const out = await smoke("bench/retention.ts");
    expect(out).toMatch(/pruned +\d+ runs and \d+ group runs in \d+ ms: \d+ runs\/s/);
    expect(out).toMatch(/batches +\d+, slowest [\d.]+ ms/);
  }, 120_000);
  test("bench/assistant-stream.ts prints the JSON answer beside the event stream: first byte, first words, whole reply", async () => {
    const out = await smoke("bench/assistant-stream.ts");
    expect(out).toMatch(/first words \(delta\)\s+[\d.]+ ms\s+[\d.]+ ms/);
  }, 120_000);
  test("bench/patterns.ts prints RegExp and re2js side by side on a hostile and an everyday pattern", async () => {
    const out = await smoke("bench/patterns.ts");
    expect(out).toMatch(/hostile .*RegExp\/re2js [\d.]+/);
    expect(out).toMatch(/everyday .*RegExp\/re2js [\d.]+/);
  }, 120_000);
  test("bench/load.ts prints mixed-load figures, zero 5xx, and the rate limit under load", async () => {
    const out = await smoke("bench/load.ts");
    expect(out).toContain("5xx             0");
    expect(out).toMatch(/admitted \d+, refused \d+/);
  }, 120_000);
  test("bench/soak.ts pushes ~300 runs through the queue: all terminal, none twice", async () => {
    const out = await smoke("bench/soak.ts");
    expect(out).toContain("runs            300 in the database");
    expect(out).toContain("every run terminal, none twice, none left queued/running");
    expect(out).toMatch(/wall time +\d+ ms +\([\d.]+ runs\/s/);
  }, 120_000);
  test("bench/soak.ts --kill: SIGKILL mid-queue and restart, every run still ends once (in-flight ones as interrupted)", async () => {
    const out = await smoke("bench/soak.ts", "--kill");
    expect(out).toMatch(/killed +SIGKILL with .*"queued":\d+/);
    expect(out).toContain("runs            300 in the database");
    expect(out).toContain("every run terminal, none twice, none left queued/running");
  }, 120_000);
  test("bench/nodes.ts: nodes on PostgreSQL vs one SQLite node, and a node killed mid group run leaves every run ended once", async () => {
    const out = await smoke("bench/nodes.ts");
    expect(out).toMatch(/postgres \/ sqlite +reads [\d.]+ +writes [\d.]+/);
    expect(out).toMatch(/3 PostgreSQL nodes \+ 2 runners +\d+ ms .*passed\)/);
    expect(out).toMatch(/killed with SIGKILL at +\{.*"running":\d+/);
    expect(out).toContain("every run terminal within the lease (plus one sweep), none executed twice");
  }, 300_000);
  test("bench/dashboard.ts times the dashboard and a page of automations, each uncached", async () => {
    const out = await smoke("bench/dashboard.ts");
    expect(out).toMatch(/get_dashboard \(all 40\): +median [\d.]+ ms, p95 [\d.]+ ms/);
    expect(out).toMatch(/list_automations \(a page of 200\): +median [\d.]+ ms/);
  }, 120_000);
  test("bench/schedules.ts prints scheduler drift and alert latency", async () => {
    const out = await smoke("bench/schedules.ts");
    expect(out).toMatch(/drift \(queued − due\) {2}p50 [\d.]+ ms, p95 [\d.]+ ms/);
    expect(out).toMatch(/alert latency \(run end → received\) {2}p50 [\d.]+ ms/);
  }, 120_000);
  test("bench/web-run-page.ts prints the script bundle's sizes and the run page's time to interactive", async () => {
    const out = await smoke("bench/web-run-page.ts");
    expect(out).toMatch(/script bundle +[\d.]+ KB raw, [\d.]+ KB gzip -9, [\d.]+ KB brotli -11/);
    expect(out).toMatch(/run page +\d+ steps: shown in \d+ ms, interactive in \d+ ms/);
  }, 120_000);
});
