// A run that passed only after retries says so everywhere: the run record (flaky, max_attempts, each attempt's
// message), the runs list, the group run's summary, the CLI's progress line, record view and tables, and the JUnit
// report (Surefire's flakyFailure). The flaky run is real: a target endpoint that fails its first call.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { XMLParser } from "fast-xml-parser";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sourceCli, type SourceCli } from "./helpers/cli-source";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let cli: SourceCli;
let project: string;
let envId: string;

/** An automation whose one step fails on the first call to a fresh key and passes on the second. */
async function flakyAutomation(name: string, retries = 2): Promise<string> {
  const key = crypto.randomUUID();
  return createAutomation(s, project, {
    name,
    kind: "http",
    retries,
    environment: envId,
    steps: [{ name: "get flaky", request: { url: `/flaky/${key}?fail=1` }, expect: [{ status: 200 }] }],
  });
}

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project, envId } = await projectWithEnv(s, "Flaky", { BASE_URL: target.url }));
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: project });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop();
});

test("a run that passed on its second attempt is passed and flaky in its record and in the runs list, with the failed attempt's message", async () => {
  const id = await flakyAutomation("record");
  const run = await waitForRun(s, project, await startRun(s, project, id));
  expect(run).toMatchObject({
    status: "passed",
    flaky: true,
    max_attempts: 3,
    attempts: [
      { attempt: 1, status: "failed", error: null, message: "step 1 (get flaky): status: expected 200, got 500" },
      { attempt: 2, status: "passed", error: null, message: null },
    ],
  });
  const list = await json<{ data: { id: string; flaky: boolean; max_attempts: number }[] }>(await s.call("GET", `/projects/${project}/runs?automation=${id}`));
  expect(list.data).toEqual([expect.objectContaining({ id: run.id, flaky: true, max_attempts: 3 })]);

  // A first-time pass is not flaky.
  const steady = await createAutomation(s, project, {
    name: "steady",
    kind: "http",
    retries: 2,
    environment: envId,
    steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }],
  });
  expect(await waitForRun(s, project, await startRun(s, project, steady))).toMatchObject({
    status: "passed",
    flaky: false,
    max_attempts: 3,
    attempts: [{ attempt: 1, message: null }],
  });
});

test("the CLI says which attempt passed: progress line, record view, runs list table, and JUnit's flakyFailure per failed attempt", async () => {
  const id = await flakyAutomation("checkout");
  const r = await cli.run(["automations", "run", id, "--env", "test", "--junit", "flaky.xml"]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({
    code: 0,
    stderr: expect.stringMatching(/run run_\w+ passed \(flaky: attempt 2 of 3\) \(1\/1 steps, 0 failed\) in /),
  });
  expect(r.stdout).toMatch(/^status +passed \(flaky: attempt 2 of 3\)$/m);
  expect(r.stdout).toMatch(/^1 of 3 +failed +\d+ ms +step 1 \(get flaky\): status: expected 200, got 500$/m);
  expect(r.stdout).toMatch(/^2 of 3 +passed/m);

  const xml = readFileSync(join(cli.cwd, "flaky.xml"), "utf8");
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
  const suite = doc.testsuites.testsuite;
  expect(suite).toMatchObject({ tests: "1", failures: "0", errors: "0" });
  expect(suite.testcase.failure).toBeUndefined();
  expect(suite.testcase.flakyFailure).toMatchObject({
    message: "step 1 (get flaky): status: expected 200, got 500",
    type: "assertion",
    stackTrace: expect.stringContaining("attempt 1 of 3 failed"),
  });
  expect(suite.testcase["system-out"]).toContain("flaky: passed on attempt 2 of 3");

  const list = await cli.run(["runs", "list", "--automation", id]);
  expect(list.code).toBe(0);
  expect(list.stdout).toContain("passed (flaky: attempt 2 of 3)");
});

test("a run that failed on every attempt keeps its failure and lists the earlier attempts as Surefire's rerunFailure", async () => {
  const key = crypto.randomUUID();
  const id = await createAutomation(s, project, {
    name: "broken",
    kind: "http",
    retries: 1,
    environment: envId,
    steps: [{ name: "get broken", request: { url: `/flaky/${key}?fail=9` }, expect: [{ status: 200 }] }],
  });
  const run = await waitForRun(s, project, await startRun(s, project, id));
  expect(run).toMatchObject({ status: "failed", flaky: false });
  const xml = await (await s.call("GET", `/projects/${project}/runs/${run.id}/junit`)).text();
  const testcase = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml).testsuites.testsuite.testcase;
  expect(testcase.failure).toMatchObject({ message: "status: expected 200, got 500", type: "assertion" });
  expect(testcase.rerunFailure).toMatchObject({ message: "step 1 (get broken): status: expected 200, got 500", type: "assertion" });
  expect(testcase.flakyFailure).toBeUndefined();
});

test("a group run counts its flaky runs, and the group's JUnit report carries the flakyFailure", async () => {
  const flaky = await flakyAutomation("group flaky");
  const steady = await createAutomation(s, project, {
    name: "group steady",
    kind: "http",
    steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }],
  });
  const group = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups`, { name: "nightly", automation_ids: [flaky, steady] }), 201);
  const r = await cli.run(["groups", "run", group.id, "--env", "test", "--watch"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(/group run grn_\w+ passed \(2\/2 runs done, 2 passed, 1 of them flaky\)/);
  expect(r.stdout).toMatch(/^summary +2 runs: 2 passed \(1 flaky\)$/m);
  expect(r.stdout).toMatch(/ group flaky +passed \(flaky: attempt 2 of 3\) /);
  expect(r.stdout).toMatch(/ group steady +passed /);
  const groupRunId = /group run (grn_\w+)/.exec(r.stderr)?.[1] ?? "";
  const listed = await json<{ data: { id: string; summary: { flaky: number } }[] }>(await s.call("GET", `/projects/${project}/group-runs`));
  expect(listed.data.find((g) => g.id === groupRunId)?.summary.flaky).toBe(1);
  const xml = await (await s.call("GET", `/projects/${project}/group-runs/${groupRunId}/junit`)).text();
  expect(xml).toMatch(/<testcase name="group flaky"[^>]*><flakyFailure message="step 1 \(get flaky\): status: expected 200, got 500" type="assertion">/);
  expect(xml).toMatch(/failures="0"/);
});
