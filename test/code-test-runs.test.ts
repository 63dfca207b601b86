// `svc test DIR` and POST /projects/{project}/test-runs: a folder's automations run on the server without being saved,
// as one group run with trigger "test", against a real target; no automation is created or changed.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntilAsync } from "./helpers/wait";
import { writeFolder } from "./helpers/folder";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let cli: SourceCli;

interface GroupRun {
  id: string;
  status: string;
  trigger: string;
  group_id: string | null;
  group_name: string;
  runs: { id: string; automation_id: string; automation_name: string; status: string; trigger: string }[];
}

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, retention: { run_days: 1 } });
  for (const slug of ["tried", "rest", "checked"]) expect((await s.call("POST", "/projects", { name: slug, slug })).status).toBe(201);
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "tried" });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop();
});

const folder = (files: Record<string, string>) => writeFolder(files, tempDir("svc-test-dir-"));

const check = (name: string, status: number) => `name: ${name}
kind: http
steps:
  - request: { method: GET, url: "{{BASE_URL}}/health" }
    expect:
      - status: ${status}
`;

async function list(project: string, what: string) {
  return (await json<{ data: Record<string, unknown>[] }>(await s.call("GET", `/projects/${project}/${what}?limit=200`))).data;
}

async function groupRunToEnd(project: string, id: string): Promise<GroupRun> {
  let gr = await json<GroupRun>(await s.call("GET", `/projects/${project}/group-runs/${id}`));
  await waitUntilAsync(async () => {
    gr = await json<GroupRun>(await s.call("GET", `/projects/${project}/group-runs/${id}`));
    return !["queued", "running"].includes(gr.status);
  }, 30_000);
  return gr;
}

test("svc test DIR runs a passing and a failing automation without saving them: JUnit with both, exit 1, no automation", async () => {
  const env = await s.call("POST", "/projects/tried/environments", { name: "local", variables: { BASE_URL: target.url } });
  expect(env.status).toBe(201);
  // The automation a tested file was applied as keeps its last run and history. (One of the same name made outside
  // the folder would be refused, as svc apply refuses it.)
  const applied = await json<{ changes: { id: string }[] }>(
    await s.call("POST", "/projects/tried/apply", { documents: [{ path: "checks/passes.yaml", text: check("Passes", 200) }] }),
  );
  const saved = { id: String(applied.changes[0]?.id) };
  // A channel that would hear of any automation starting to fail.
  const channel = await s.call("POST", "/projects/tried/alert-channels", {
    name: "hook",
    kind: "webhook",
    url: `${target.url}/health`,
    secret: "s3cret-value",
  });
  expect(channel.status).toBe(201);
  const dir = folder({
    "checks/passes.yaml": check("Passes", 200),
    "checks/fails.yaml": check("Fails", 418),
    "env.yaml": "type: environment\nname: local\nvariables:\n  BASE_URL: http://127.0.0.1:9\n",
  });
  const junit = join(tempDir("svc-test-junit-"), "report.xml");
  const r = await cli.run(["test", dir, "--env", "local", "--junit", junit]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(`wrote the JUnit report to ${junit}`);
  const xml = readFileSync(junit, "utf8");
  expect(xml).toContain('name="Passes"');
  expect(xml).toContain('name="Fails"');
  expect(xml).toContain("<failure");

  // Nothing saved: the one automation is the hand-made one, untouched; the test is a group run with trigger test.
  const auts = await list("tried", "automations");
  expect(auts.map((a) => a.id)).toEqual([saved.id]);
  expect(auts[0]?.last_run).toBeNull();
  const groupRuns = await list("tried", "group-runs");
  expect(groupRuns).toHaveLength(1);
  const gr = await groupRunToEnd("tried", String(groupRuns[0]?.id));
  expect(gr).toMatchObject({ trigger: "test", group_id: null, status: "failed" });
  expect(gr.group_name).toStartWith("test svc-test-dir-");
  expect(gr.runs.map((x) => [x.automation_name, x.status, x.trigger]).sort()).toEqual([
    ["Fails", "failed", "test"],
    ["Passes", "passed", "test"],
  ]);
  for (const run of gr.runs) expect(run.automation_id).toStartWith("tst_");
  // No history moves: neither the saved automation's nor the project's.
  const history = await json<{ runs: number }>(await s.call("GET", "/projects/tried/history"));
  expect(history.runs).toBe(0);
  expect((await json<{ runs: number }>(await s.call("GET", `/projects/tried/automations/${saved.id}/history`))).runs).toBe(0);

  expect(await list("tried", "alert-channels/hook/deliveries")).toEqual([]);

  // A folder whose automations all pass exits 0.
  const ok = await cli.run(["test", folder({ "p.yaml": check("Only passes", 200) }), "--env", "local"]);
  expect(ok.code).toBe(0);
  expect((await list("tried", "automations")).length).toBe(1);
});

test("POST /test-runs answers 202 with the group run and its runs, honours Idempotency-Key, and names a bad file's line", async () => {
  const documents = [
    { path: "a.yaml", text: check("A", 200).replace("{{BASE_URL}}", target.url) },
    { path: "b.yaml", text: check("B", 500).replace("{{BASE_URL}}", target.url) },
  ];
  const headers = { "Idempotency-Key": "test-run-1" };
  const first = await s.call("POST", "/projects/rest/test-runs", { documents }, undefined, headers);
  expect(first.status).toBe(202);
  const started = await json<GroupRun>(first, 202);
  expect(started.trigger).toBe("test");
  expect(started.group_name).toBe("test");
  expect(started.runs.map((x) => x.automation_name).sort()).toEqual(["A", "B"]);
  const again = await s.call("POST", "/projects/rest/test-runs", { documents }, undefined, headers);
  expect(again.headers.get("Idempotent-Replayed")).toBe("true");
  expect((await json<GroupRun>(again, 202)).id).toBe(started.id);
  const done = await groupRunToEnd("rest", started.id);
  expect(done.runs.map((x) => [x.automation_name, x.status]).sort()).toEqual([
    ["A", "passed"],
    ["B", "failed"],
  ]);
  expect(await list("rest", "automations")).toEqual([]);

  const bad = await s.call("POST", "/projects/rest/test-runs", {
    documents: [{ path: "bad.yaml", text: "name: Bad\nkind: http\nsteps:\n  - request:\n      method: FETCH\n      url: http://x/\n" }],
  });
  expect(bad.status).toBe(400);
  const body = await json<{ error: string; details: { path: string }[] }>(bad, 400);
  expect(body.error).toBe("invalid_request");
  expect(body.details[0]?.path).toBe("bad.yaml:5"); // the bad value's own line
  const unknownEnv = await s.call("POST", "/projects/rest/test-runs", { documents: [{ path: "e.yaml", text: `environment: nowhere\n${check("E", 200)}` }] });
  expect(unknownEnv.status).toBe(400);
  expect((await json<{ details: { path: string }[] }>(unknownEnv, 400)).details[0]?.path).toBe("e.yaml:1");
  expect(await list("rest", "group-runs")).toHaveLength(1);

  // Retention prunes a test group run with its runs like any other.
  const dayOld = new Date(Date.now() - 2 * 86_400_000).toISOString();
  await s.sql("UPDATE runs SET created_at = ?, finished_at = ? WHERE group_run_id = ?", dayOld, dayOld, started.id);
  await s.sql("UPDATE group_runs SET created_at = ? WHERE id = ?", dayOld, started.id);
  expect(await waitUntilAsync(async () => (await list("rest", "group-runs")).length === 0, 20_000, 100)).toBe(true);
  expect(await list("rest", "runs")).toEqual([]);
});

test("svc test on a folder without documents is a usage error saying so (exit 2), not a validation message", async () => {
  const empty = tempDir("svc-test-empty-");
  const r = await cli.run(["test", empty, "--env", "local"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("holds no .yaml, .yml or .json file: nothing to test");
  expect(r.stderr).not.toContain("Too small");
});

/** The problems a refused folder's 400 lists on stderr (`  FILE:LINE: message`), in order. */
const problemLines = (stderr: string) => stderr.split("\n").filter((l) => /^ {2}\S+:\d+: /.test(l));

test("svc test refuses every folder svc apply refuses for what it holds: each problem at its file and line, and nothing runs", async () => {
  const checkedCli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "checked" });
  try {
    expect((await s.call("POST", "/projects/checked/environments", { name: "local", variables: { BASE_URL: target.url } })).status).toBe(201);
    const steps = [{ request: { method: "GET", url: `${target.url}/health` } }];
    expect((await s.call("POST", "/projects/checked/automations", { name: "Hand made", kind: "http", steps })).status).toBe(201);
    const dir = folder({
      "checks/ok.yaml": check("Passes", 200),
      "checks/feature.yaml": `feature: Nope Feature\n${check("With feature", 200)}`,
      "checks/taken.yaml": check("Hand made", 200),
      "groups/g.yaml": "type: group\nname: g\nautomations: [missing.yaml, checks/ok.yaml, gone.yaml]\n",
      "schedules/s.yaml": "type: schedule\nname: s\ntarget: { group: nope }\ninterval_seconds: 600\n",
    });
    const tested = await checkedCli.run(["test", dir, "--env", "local"]);
    expect(tested.code).toBe(2);
    expect(problemLines(tested.stderr)).toEqual([
      '  checks/feature.yaml:1: feature: feature "Nope Feature" does not exist in this project',
      expect.stringContaining('  checks/taken.yaml:1: name: an automation named "Hand made" exists (aut_'),
      '  groups/g.yaml:3: automations.0: no automation has the key "missing.yaml"',
      '  groups/g.yaml:3: automations.2: no automation has the key "gone.yaml"',
      '  schedules/s.yaml:3: target.group: no group has the key or the exact name "nope"',
    ]);
    // The very problems svc apply names for the same folder.
    const applied = await checkedCli.run(["apply", dir, "--dry-run"]);
    expect(applied.code).toBe(2);
    expect(problemLines(tested.stderr)).toEqual(problemLines(applied.stderr));
    expect(await list("checked", "group-runs")).toEqual([]);

    // What svc test does not hold against a folder: the secrets' variables (only svc apply sends their values), and a
    // record whose file has moved (the CI's svc apply --prune deletes it; svc apply without --prune says so).
    const moving = folder({ "old/moving.yaml": check("Moving", 200) });
    expect((await checkedCli.run(["apply", moving])).code).toBe(0);
    rmSync(join(moving, "old"), { recursive: true });
    writeFileSync(join(moving, "moved.yaml"), check("Moving", 200));
    writeFileSync(join(moving, "env.yaml"), "type: environment\nname: other\nsecrets:\n  TOKEN: UNSET_TOKEN_VARIABLE\n");
    const passes = await checkedCli.run(["test", moving, "--env", "local"]);
    expect(passes.stderr).not.toContain("problem");
    expect(passes.code).toBe(0);
    const refused = await checkedCli.run(["apply", moving, "--dry-run"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("the environment variable UNSET_TOKEN_VARIABLE is not set");
    expect(refused.stderr).toContain("(apply with --prune to delete it)");
  } finally {
    checkedCli.remove();
  }
});
