// History and health over the real API: an automation's health is current as soon as a run ends, flaky is named
// on a target that alternates (and on a pass after a retry), history sums the daily roll-ups, and a quarantined
// automation keeps running while its failure fails neither its group run, its JUnit, nor the CLI's exit code.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { XMLParser } from "fast-xml-parser";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sourceCli, type SourceCli } from "./helpers/cli-source";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;
let project: string;
let envId: string;
/** The target answers each key with the status the test sets for it (200 by default). */
const statusOf = new Map<string, number>();
const tries = new Map<string, number>();
let target: ReturnType<typeof Bun.serve>;

type Health = {
  state: string;
  last_status: string | null;
  runs: number;
  pass_rate: number | null;
  flips: number;
  runs_7d: number;
  pass_rate_7d: number | null;
};
type History = {
  days: number;
  runs: number;
  passed: number;
  failed: number;
  pass_rate: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  daily: { date: string; runs: number; passed: number; failed: number; pass_rate: number | null; p50_ms: number | null }[];
};

beforeAll(async () => {
  target = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      const key = new URL(req.url).pathname.slice(1);
      const n = (tries.get(key) ?? 0) + 1;
      tries.set(key, n);
      // "retry-…" keys fail their first call only.
      if (key.startsWith("retry-")) return new Response(null, { status: n === 1 ? 500 : 200 });
      return new Response(null, { status: statusOf.get(key) ?? 200 });
    },
  });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project, envId } = await projectWithEnv(s, "History", { BASE_URL: `http://127.0.0.1:${target.port}` }));
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: project });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  target.stop(true);
});

async function automationOn(key: string, extra: Record<string, unknown> = {}): Promise<string> {
  return createAutomation(s, project, {
    name: key,
    kind: "http",
    environment: envId,
    steps: [{ request: { url: `/${key}` }, expect: [{ status: 200 }] }],
    ...extra,
  });
}

const health = async (id: string) => (await json<{ health: Health }>(await s.call("GET", `/projects/${project}/automations/${id}`))).health;
const runOnce = async (id: string) => waitForRun(s, project, await startRun(s, project, id));

test("health is unknown before any run, and current as soon as each run ends: passing, then failing", async () => {
  const id = await automationOn("steady");
  expect(await health(id)).toEqual({ state: "unknown", last_status: null, runs: 0, pass_rate: null, flips: 0, runs_7d: 0, pass_rate_7d: null });
  expect((await runOnce(id)).status).toBe("passed");
  expect(await health(id)).toEqual({ state: "passing", last_status: "passed", runs: 1, pass_rate: 1, flips: 0, runs_7d: 1, pass_rate_7d: 1 });
  statusOf.set("steady", 500);
  expect((await runOnce(id)).status).toBe("failed");
  expect(await health(id)).toEqual({ state: "failing", last_status: "failed", runs: 2, pass_rate: 0.5, flips: 1, runs_7d: 2, pass_rate_7d: 0.5 });
  // The list shows the same health.
  const list = await json<{ data: { id: string; health: Health }[] }>(await s.call("GET", `/projects/${project}/automations?q=steady`));
  expect(list.data.find((a) => a.id === id)?.health.state).toBe("failing");
});

test("a target that alternates makes the automation flaky (3 flips in its latest runs), its history says half passed", async () => {
  const id = await automationOn("alternating");
  for (let i = 0; i < 4; i++) {
    statusOf.set("alternating", i % 2 === 0 ? 200 : 500);
    await runOnce(id);
    const h = await health(id);
    // Two flips are not enough; the third makes it flaky.
    expect(h.state).toBe(i < 3 ? (i % 2 === 0 ? "passing" : "failing") : "flaky");
    expect(h.flips).toBe(i);
  }
  const h = await json<History>(await s.call("GET", `/projects/${project}/automations/${id}/history?days=7`));
  expect(h).toMatchObject({ days: 7, runs: 4, passed: 2, failed: 2, pass_rate: 0.5 });
  expect(h.daily).toHaveLength(7);
  const today = new Date().toISOString().slice(0, 10);
  expect(h.daily[6]).toMatchObject({ date: today, runs: 4, passed: 2, failed: 2, pass_rate: 0.5 });
  expect(h.daily[0]).toEqual({ date: expect.any(String), runs: 0, passed: 0, failed: 0, pass_rate: null, p50_ms: null });
  expect(h.p50_ms).toBeGreaterThanOrEqual(0);
  expect(h.p95_ms ?? -1).toBeGreaterThanOrEqual(h.p50_ms ?? 0);

  // The same through the CLI, by name.
  const r = await cli.run(["automations", "history", "alternating", "--days", "7", "--json"]);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual(h);
});

test("one read of many automations gives each its own health: the list of a page equals each automation read alone", async () => {
  const tag = crypto.randomUUID().slice(0, 8);
  const [up, down, idle] = [await automationOn(`many-up-${tag}`), await automationOn(`many-down-${tag}`), await automationOn(`many-idle-${tag}`)];
  statusOf.set(`many-down-${tag}`, 500);
  for (let i = 0; i < 3; i++) await runOnce(up);
  await runOnce(down);
  const list = await json<{ data: { id: string; health: Health }[] }>(await s.call("GET", `/projects/${project}/automations?q=many-&limit=200`));
  const listed = new Map(list.data.map((a) => [a.id, a.health]));
  expect(listed.get(up)).toMatchObject({ state: "passing", runs: 3, last_status: "passed" });
  expect(listed.get(down)).toMatchObject({ state: "failing", runs: 1, last_status: "failed" });
  expect(listed.get(idle)).toMatchObject({ state: "unknown", runs: 0, last_status: null });
  for (const id of [up, down, idle]) expect(listed.get(id)).toEqual(await health(id));
});

test("a pass after a retry makes the automation flaky at once", async () => {
  const id = await automationOn(`retry-${crypto.randomUUID()}`, { retries: 1 });
  const run = await runOnce(id);
  expect(run.status).toBe("passed");
  expect(await health(id)).toMatchObject({ state: "flaky", last_status: "passed", pass_rate: 1 });
});

test("project history sums every automation's days; days is bounded and a bad value is a 400 naming it", async () => {
  const h = await json<History>(await s.call("GET", `/projects/${project}/history`));
  expect(h.days).toBe(30);
  expect(h.daily).toHaveLength(30);
  expect(h.runs).toBeGreaterThanOrEqual(7);
  expect(h.runs).toBe(h.passed + h.failed);
  expect(h.pass_rate).toBeCloseTo(h.passed / h.runs, 10);
  const bad = await json<{ error: string; details: { path: string }[] }>(await s.call("GET", `/projects/${project}/history?days=0`), 400);
  expect(bad.error).toBe("invalid_request");
  expect(bad.details[0]?.path).toContain("days");
});

test("a quarantined automation still runs, but its failure fails neither its group run, its JUnit, nor the CLI", async () => {
  statusOf.set("broken", 500);
  const broken = await automationOn("broken");
  const fine = await automationOn("fine");
  const patched = await json<{ quarantined: boolean }>(await s.call("PATCH", `/projects/${project}/automations/${broken}`, { quarantined: true }));
  expect(patched.quarantined).toBe(true);
  await json(await s.call("POST", `/projects/${project}/groups`, { name: "suite", automation_ids: [broken, fine] }), 201);

  const r = await cli.run(["groups", "run", "suite", "--env", "test", "--watch", "--json", "--junit", "suite.xml"]);
  expect(r.code).toBe(0);
  const gr = JSON.parse(r.stdout) as { id: string; status: string; summary: Record<string, number>; runs: { status: string; quarantined: boolean }[] };
  expect(gr.status).toBe("passed");
  expect(gr.summary).toMatchObject({ total: 2, passed: 1, failed: 1, quarantined: 1 });
  expect(gr.runs.map((x) => [x.status, x.quarantined])).toEqual([
    ["failed", true],
    ["passed", false],
  ]);
  const xml = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(join(cli.cwd, "suite.xml"), "utf8"));
  expect(xml.testsuites["@_failures"]).toBe("0");
  const cases = xml.testsuites.testsuite.testcase;
  expect(cases[0].skipped["@_message"]).toStartWith("quarantined (failed):");

  // One run of the quarantined automation alone: reported failed, exit code 0.
  const one = await cli.run(["automations", "run", "broken", "--env", "test", "--watch"]);
  expect(one.code).toBe(0);
  expect(one.stdout).toContain("failed");

  // Taken out of quarantine, its failure fails the group run and the CLI again.
  await json(await s.call("PATCH", `/projects/${project}/automations/${broken}`, { quarantined: false }));
  const again = await cli.run(["groups", "run", "suite", "--env", "test", "--watch", "--json"]);
  expect(again.code).toBe(1);
  expect(JSON.parse(again.stdout)).toMatchObject({ status: "failed", summary: { failed: 1, quarantined: 0 } });
});
