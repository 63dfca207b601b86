// The run engine's lifecycle: overall timeout, cancel while running, retries, group runs and their JUnit XML.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { XMLParser } from "fast-xml-parser";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { createAutomation, getRun, json, projectWithEnv, runnerServer, runToEnd, startRun, waitForRun } from "./helpers/runs";

let s: TestServer;
let target: TargetApp;
let project: string;

beforeAll(async () => {
  target = startTargetApp();
  // One worker: a run that is not stopped promptly would hold up the next one.
  ({ s, project } = await runnerServer("lifecycle", target.url, 1));
});
afterAll(async () => {
  await s.stop();
  await target.stop();
});

const http = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  name: `a-${crypto.randomUUID().slice(0, 8)}`,
  kind: "http",
  environment: "test",
  steps,
  ...extra,
});

test("a run longer than timeout_ms ends timed_out, and the step says it was stopped", async () => {
  const started = Date.now();
  const run = await runToEnd(s, project, http([{ request: { url: "/slow?ms=8000" } }, { request: { url: "/items/1" } }], { timeout_ms: 1000 }));
  expect(run.status).toBe("timed_out");
  expect(Date.now() - started).toBeLessThan(4000);
  expect(run.error).toContain("did not finish within its timeout of 1000 ms");
  expect(run.steps.map((x) => x.status)).toEqual(["error", "skipped"]);
  expect(run.steps[0]?.message).toBe("stopped: the run timed out");
  // The stopped step ran until the timeout, and says so (not 0 ms).
  expect(run.steps[0]?.duration_ms).toBeGreaterThanOrEqual(900);
  expect(run.steps[0]?.duration_ms).toBeLessThan(3000);
});

test("cancel_run stops a running run within a second and frees the worker", async () => {
  const slow = await createAutomation(s, project, http([{ request: { url: "/slow?ms=20000" } }]));
  const runId = await startRun(s, project, slow);
  for (let i = 0; (await getRun(s, project, runId)).status !== "running"; i++) {
    if (i > 200) throw new Error("the run never started");
    await Bun.sleep(10);
  }
  await Bun.sleep(100);
  const cancelledAt = Date.now();
  const res = await s.call("POST", `/projects/${project}/runs/${runId}/cancel`);
  expect(res.status).toBe(200);
  expect(((await res.json()) as { status: string }).status).toBe("cancelled");
  // With one worker, the next run can only start once the cancelled one has really stopped.
  const next = await runToEnd(s, project, http([{ request: { url: "/items/1" } }]));
  expect(next.status).toBe("passed");
  expect(Date.now() - cancelledAt).toBeLessThan(1000);
  const cancelled = await getRun(s, project, runId);
  expect(cancelled.status).toBe("cancelled");
  expect(cancelled.steps[0]?.message).toBe("stopped: the run was cancelled");
  // Cancelling again is a conflict, not a second cancellation.
  expect((await s.call("POST", `/projects/${project}/runs/${runId}/cancel`)).status).toBe(409);
});

test("deleting an automation stops its running run within a second; the run stays readable as cancelled", async () => {
  const slow = await createAutomation(s, project, http([{ request: { url: "/slow?ms=20000" } }]));
  const runId = await startRun(s, project, slow);
  for (let i = 0; (await getRun(s, project, runId)).status !== "running"; i++) {
    if (i > 200) throw new Error("the run never started");
    await Bun.sleep(10);
  }
  const t0 = Date.now();
  expect((await s.call("DELETE", `/projects/${project}/automations/${slow}`)).status).toBe(204);
  const next = await runToEnd(s, project, http([{ request: { url: "/items/2" } }]));
  expect(next.status).toBe("passed");
  expect(Date.now() - t0).toBeLessThan(1000);
  expect((await getRun(s, project, runId)).status).toBe("cancelled");
});

test("retries run the automation again and record every attempt", async () => {
  const key = crypto.randomUUID();
  const passes = await runToEnd(s, project, http([{ request: { url: `/flaky/${key}?fail=2` }, expect: [{ status: 200 }] }], { retries: 2 }));
  expect(passes.status).toBe("passed");
  expect(passes.attempts.map((a) => a.status)).toEqual(["failed", "failed", "passed"]);
  expect(passes.attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
  expect(passes.attempts[0]?.error).toBeNull();
  expect(passes.steps[0]?.response?.body).toBe('{"call":3}');

  const key2 = crypto.randomUUID();
  const fails = await runToEnd(s, project, http([{ request: { url: `/flaky/${key2}?fail=5` }, expect: [{ status: 200 }] }], { retries: 1 }));
  expect(fails.status).toBe("failed");
  expect(fails.attempts.map((a) => a.status)).toEqual(["failed", "failed"]);
  expect(fails.steps[0]?.message).toBe("status: expected 200, got 500");
});

test("the automation's last run reflects the finished run", async () => {
  const id = await createAutomation(s, project, http([{ request: { url: "/items/1" }, expect: [{ status: 404 }] }]));
  const run = await waitForRun(s, project, await startRun(s, project, id));
  const a = await json<{ last_run: { id: string; status: string } | null }>(await s.call("GET", `/projects/${project}/automations/${id}`));
  expect(a.last_run?.id).toBe(run.id);
  expect(a.last_run?.status).toBe("failed");
});

test("the environment is chosen per run, else the automation's default", async () => {
  await json(await s.call("POST", `/projects/${project}/environments`, { name: "other", variables: { BASE_URL: `${target.url}/items` } }), 201);
  const id = await createAutomation(s, project, http([{ request: { url: "/1" }, expect: [{ json: "$.name", equals: "apple" }] }]));
  const onDefault = await waitForRun(s, project, await startRun(s, project, id));
  expect(onDefault.steps[0]?.request?.url).toBe(`${target.url}/1`);
  expect(onDefault.status).toBe("failed");
  const onOther = await waitForRun(s, project, await startRun(s, project, id, { environment: "other" }));
  expect(onOther.steps[0]?.request?.url).toBe(`${target.url}/items/1`);
  expect(onOther.status).toBe("passed");
});

describe("group runs", () => {
  type GroupRun = { id: string; status: string; summary: Record<string, number>; runs: { id: string; status: string; automation_name: string }[] };

  async function runGroup(ids: string[], body: Record<string, unknown> = {}) {
    const group = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/groups`, { name: `g-${crypto.randomUUID().slice(0, 6)}`, automation_ids: ids }),
      201,
    );
    const gr = await json<GroupRun>(await s.call("POST", `/projects/${project}/groups/${group.id}/run`, body), 202);
    for (let i = 0; ; i++) {
      const now = await json<GroupRun>(await s.call("GET", `/projects/${project}/group-runs/${gr.id}`));
      if (!["queued", "running"].includes(now.status)) return now;
      if (i > 1000) throw new Error("group run never finished");
      await Bun.sleep(20);
    }
  }

  test("a group with a failing automation is failed; its JUnit XML parses back with the right counts", async () => {
    const ok1 = await createAutomation(s, project, { ...http([{ request: { url: "/items/1" }, expect: [{ status: 200 }] }]), name: "item one" });
    const ok2 = await createAutomation(s, project, {
      ...http([{ request: { url: "/items/2" }, expect: [{ json: "$.name", equals: "bread" }] }]),
      name: "item two",
    });
    const bad = await createAutomation(s, project, {
      ...http([{ request: { url: "/items/3" }, expect: [{ json: "$.price", lt: 10 }] }]),
      name: "cheap cheese",
    });
    const broken = await createAutomation(s, project, { ...http([{ request: { url: "/items/{{UNSET}}" } }]), name: "broken one" });
    const gr = await runGroup([ok1, ok2, bad, broken]);
    expect(gr.status).toBe("failed");
    expect(gr.summary).toMatchObject({ total: 4, passed: 2, failed: 1, error: 1, running: 0, queued: 0 });

    const res = await s.call("GET", `/projects/${project}/group-runs/${gr.id}/junit`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("xml");
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(await res.text());
    const suite = doc.testsuites.testsuite;
    expect(suite.tests).toBe("4");
    expect(suite.failures).toBe("1");
    expect(suite.errors).toBe("1");
    const cases = suite.testcase as { name: string; time: string; failure?: { message: string }; error?: { message: string } }[];
    expect(cases.map((c) => c.name).sort()).toEqual(["broken one", "cheap cheese", "item one", "item two"]);
    const cheese = cases.find((c) => c.name === "cheap cheese");
    expect(cheese?.failure?.message).toBe("$.price: expected < 10, got 12");
    expect(cases.find((c) => c.name === "broken one")?.error?.message).toContain("{{UNSET}} is not defined");
    for (const c of cases) expect(Number(c.time)).toBeGreaterThanOrEqual(0);

    const runXml = await (await s.call("GET", `/projects/${project}/runs/${gr.runs[0]?.id}/junit`)).text();
    const runDoc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(runXml);
    expect(runDoc.testsuites.tests).toBe("1");
  });

  test("a passing group is passed and its runs carry the group run id and the chosen environment", async () => {
    const ids = await Promise.all([1, 2, 3].map((n) => createAutomation(s, project, http([{ request: { url: `/items/${n}` }, expect: [{ status: 200 }] }]))));
    const gr = await runGroup(ids, { environment: "test" });
    expect(gr.status).toBe("passed");
    expect(gr.runs.map((r) => r.status)).toEqual(["passed", "passed", "passed"]);
    const listed = await json<{ data: { group_run_id: string; environment_id: string | null }[] }>(
      await s.call("GET", `/projects/${project}/runs?group_run=${gr.id}`),
    );
    expect(listed.data.length).toBe(3);
    expect(listed.data.every((r) => r.group_run_id === gr.id && r.environment_id !== null)).toBe(true);
  });
});

test("a run still going when the shutdown grace period ends is finished as error, not left running", async () => {
  const { tempDir } = await import("./helpers/server");
  const dataDir = tempDir();
  const first = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false }, runner: { shutdown_grace_ms: 200 } });
  const { project: p } = await projectWithEnv(first, "grace", { BASE_URL: target.url });
  const id = await createAutomation(first, p, http([{ request: { url: "/slow?ms=20000" } }]));
  const seen = target.seen.length;
  const runId = await startRun(first, p, id);
  // Executing, not only claimed: a run claimed but not started yet when the server stops goes back to the queue.
  for (let i = 0; !target.seen.slice(seen).some((r) => r.path.startsWith("/slow")); i++) {
    if (i > 500) throw new Error("the run never reached its target");
    await Bun.sleep(10);
  }
  expect((await getRun(first, p, runId)).status).toBe("running");
  const t0 = Date.now();
  await first.stop();
  expect(Date.now() - t0).toBeLessThan(3000);
  const second = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
  try {
    const run = await second.server.core.db.selectFrom("runs").select(["status", "error"]).where("id", "=", runId).executeTakeFirstOrThrow();
    expect(run).toEqual({ status: "error", error: "interrupted by server shutdown before the run finished: run it again" });
  } finally {
    await second.stop();
    const { rmSync } = await import("node:fs");
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("the run engine reports itself healthy to /readyz", async () => {
  const res = await fetch(`${s.url}/readyz`);
  const body = (await res.json()) as { checks: { engines: Record<string, { ok: boolean }> } };
  expect(res.status).toBe(200);
  expect(body.checks.engines.runs?.ok).toBe(true);
});

test("the step format is published as JSON Schema in the OpenAPI document", async () => {
  const doc = (await (await fetch(`${s.url}/api/v1/openapi.json`)).json()) as { components: { schemas: Record<string, unknown> } };
  for (const name of ["Step", "HttpStep", "BrowserStep", "Assertion", "Locator", "StepResult", "AssertionResult"]) {
    expect(doc.components.schemas[name]).toBeDefined();
  }
});
