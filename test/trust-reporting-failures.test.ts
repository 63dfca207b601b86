// In a CI log (stdout not a terminal) the CLI never cuts off what a failed check actually got, and a watched run or
// group run ends with a numbered list of every failure and its messages.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { sourceCli, type SourceCli } from "./helpers/cli-source";
import { createAutomation, json, projectWithEnv } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let cli: SourceCli;
let project: string;
const ids: Record<string, string> = {};

// Longer than any column and than the 200 characters a one-line assertion message keeps of a value.
const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join("-");

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "Failures", { BASE_URL: target.url }));
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: project });
  ids.long = await createAutomation(s, project, {
    name: "long value",
    kind: "http",
    steps: [{ name: "echo a long note", request: { url: `/echo?note=${LONG}` }, expect: [{ status: 200 }, { json: "$.query.note", equals: "short" }] }],
  });
  ids.status = await createAutomation(s, project, {
    name: "missing item",
    kind: "http",
    steps: [{ name: "get item 9", request: { url: "/items/9" }, expect: [{ status: 200 }] }],
  });
  ids.passing = await createAutomation(s, project, { name: "health", kind: "http", steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }] });
  ids.error = await createAutomation(s, project, {
    name: "unset variable",
    kind: "http",
    steps: [{ name: "uses a missing variable", request: { url: "/items/{{ITEM}}" } }],
  });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop();
});

test("automations run --watch, not on a terminal: the failed check's actual value is printed whole, and the output ends with the numbered failure", async () => {
  expect(LONG.length).toBeGreaterThan(200);
  const r = await cli.run(["automations", "run", ids.long ?? "", "--env", "test", "--watch"]);
  expect(r.code).toBe(1);
  expect(r.stdout).toContain(`actual:   ${JSON.stringify(LONG)}`);
  expect(r.stdout).toContain('expected: "short"');
  // The steps table does not cut the step's message either (the message itself keeps 200 characters of a value).
  const runId = /run (run_\w+) failed/.exec(r.stderr)?.[1] ?? "";
  const run = await json<{ steps: { message: string }[] }>(await s.call("GET", `/projects/${project}/runs/${runId}`));
  expect(r.stdout).toMatch(new RegExp(`^1  echo a long note  failed  \\d+ ms +${RegExp.escape(run.steps[0]?.message ?? "?")}$`, "m"));
  const tail = r.stdout.trimEnd().split("\n").slice(-6).join("\n");
  expect(tail).toMatch(
    /^1 failure:\n1\) long value \(run_\w+\) failed\n {3}step 1 \(echo a long note\) failed: \$\.query\.note: expected "short", got "word0-/m,
  );
  expect(tail).toContain(`     ✗ $.query.note == "short"\n       expected: "short"\n       actual:   ${JSON.stringify(LONG)}`);

  // The same in `runs show`, and the --json output stays the API's JSON alone, the failure list on stderr.
  const shown = await cli.run(["runs", "show", runId]);
  expect(shown.stdout).toContain(`actual:   ${JSON.stringify(LONG)}`);
  const asJson = await cli.run(["automations", "run", ids.long ?? "", "--env", "test", "--watch", "--json"]);
  expect(JSON.parse(asJson.stdout)).toMatchObject({ status: "failed" });
  expect(asJson.stderr).toContain(`actual:   ${JSON.stringify(LONG)}`);
});

test("groups run --watch ends with a numbered list of every run that did not pass, with all its messages", async () => {
  const group = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/groups`, { name: "everything", automation_ids: [ids.passing, ids.long, ids.status, ids.error] }),
    201,
  );
  const r = await cli.run(["groups", "run", group.id, "--env", "test", "--watch"]);
  expect(r.code).toBe(1);
  const list = r.stdout.slice(r.stdout.lastIndexOf("3 failures:"));
  expect(list).toMatch(/^3 failures:\n1\) long value \(run_\w+\) failed\n/);
  expect(list).toContain(`       actual:   ${JSON.stringify(LONG)}`);
  expect(list).toMatch(
    /\n2\) missing item \(run_\w+\) failed\n {3}step 1 \(get item 9\) failed: status: expected 200, got 404\n {5}✗ status == 200\n {7}expected: 200\n {7}actual: {3}404\n/,
  );
  expect(list).toMatch(/\n3\) unset variable \(run_\w+\) error\n {3}step 1 \(uses a missing variable\) error: .*ITEM/);
  expect(list).not.toContain("health");
  expect(r.stdout.trimEnd().endsWith(list.trimEnd())).toBe(true);
});
