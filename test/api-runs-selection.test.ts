// Runs by selection (tags, names, feature; re-run of a group run's failures), per-run variables, one-run secrets,
// CI metadata (stored, shown, filterable), environments' variables_merge, and sequential groups: over REST, against
// a real target the runs call.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { json, projectWithEnv, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil } from "./helpers/wait";

setDefaultTimeout(60_000);

let s: TestServer;
let target: TargetApp;
let project = "";
const ids: Record<string, string> = {};
const id = (name: string) => ids[name] ?? `missing ${name}`;

interface GroupRun {
  id: string;
  status: string;
  group_name: string;
  environment_id: string | null;
  variables: Record<string, string>;
  metadata: Record<string, string>;
  summary: { total: number; queued: number; passed: number; failed: number; cancelled: number };
  runs: { id: string; automation_id: string; status: string; error: string | null; variables: Record<string, string>; metadata: Record<string, string> }[];
}

const TERMINAL = ["passed", "failed", "error", "timed_out", "cancelled"];

async function groupRun(id: string): Promise<GroupRun> {
  return json<GroupRun>(await s.call("GET", `/projects/${project}/group-runs/${id}`));
}

async function groupRunToEnd(id: string): Promise<GroupRun> {
  let gr = await groupRun(id);
  for (let i = 0; i < 2000 && !TERMINAL.includes(gr.status); i++) {
    await Bun.sleep(20);
    gr = await groupRun(id);
  }
  return gr;
}

async function automation(name: string, path: string, extra: Record<string, unknown> = {}): Promise<string> {
  const a = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/automations`, { name, kind: "http", steps: [{ request: { url: path }, expect: [{ status: 200 }] }], ...extra }),
    201,
  );
  ids[name] = a.id;
  return a.id;
}

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 2 } });
  ({ project } = await projectWithEnv(s, "Cockpit", { BASE_URL: target.url, WHO: "env" }, { TOKEN: "env-token-value-1" }));
  await automation("smoke a", "/health?who={{WHO}}&a", { tags: ["smoke", "API"] });
  await automation("smoke b", "/health?b", { tags: ["Smoke"] });
  await automation("smoke test", "/health?c", { tags: ["smoke-test"] });
  await automation("smoke draft", "/health?d", { tags: ["smoke"], status: "draft" });
  await automation("fails", "/status?code=500", { tags: ["flaky"] });
});

afterAll(async () => {
  await s.stop();
  await target.stop();
});

test("list_automations?tag= is repeatable and matches any of the tags, ignoring case, never a longer tag", async () => {
  const page = await json<{ data: { name: string }[] }>(await s.call("GET", `/projects/${project}/automations?tag=smoke&tag=flaky`));
  expect(page.data.map((a) => a.name).sort()).toEqual(["fails", "smoke a", "smoke b", "smoke draft"]);
  const one = await json<{ data: { name: string }[] }>(await s.call("GET", `/projects/${project}/automations?tag=api`));
  expect(one.data.map((a) => a.name)).toEqual(["smoke a"]);
});

test("POST /projects/{project}/runs by tag: one group run of the active tagged automations, 202, Idempotency-Key honoured", async () => {
  const body = { tags: ["smoke"], environment: "test", metadata: { branch: "main", commit: "abc123" } };
  const first = await s.call("POST", `/projects/${project}/runs`, body, undefined, { "idempotency-key": "sel-1" });
  expect(first.status).toBe(202);
  const gr = (await first.json()) as GroupRun;
  expect(gr.runs.map((r) => r.automation_id).sort()).toEqual([id("smoke a"), id("smoke b")].sort());
  expect(gr.group_name).toBe("selection: tag smoke");
  expect(gr.metadata).toEqual({ branch: "main", commit: "abc123" });
  expect(gr.runs[0]?.metadata).toEqual({ branch: "main", commit: "abc123" });
  const again = await s.call("POST", `/projects/${project}/runs`, body, undefined, { "idempotency-key": "sel-1" });
  expect(again.headers.get("idempotent-replayed")).toBe("true");
  expect(((await again.json()) as GroupRun).id).toBe(gr.id);
  expect((await groupRunToEnd(gr.id)).status).toBe("passed");

  // Metadata filters: exact, on runs and on group runs.
  const runs = await json<{ data: { id: string }[] }>(await s.call("GET", `/projects/${project}/runs?metadata.branch=main&metadata.commit=abc123`));
  expect(runs.data.map((r) => r.id).sort()).toEqual(gr.runs.map((r) => r.id).sort());
  expect((await json<{ data: unknown[] }>(await s.call("GET", `/projects/${project}/runs?metadata.branch=Main`))).data).toEqual([]);
  const grs = await json<{ data: { id: string }[] }>(await s.call("GET", `/projects/${project}/group-runs?metadata.branch=main`));
  expect(grs.data.map((g) => g.id)).toEqual([gr.id]);
});

test("a selection narrows: names and feature; bad selections are 400 naming the field and start nothing", async () => {
  const byName = await json<GroupRun>(await s.call("POST", `/projects/${project}/runs`, { automations: ["smoke draft", id("smoke b")], tags: ["smoke"] }), 202);
  // A draft named explicitly runs; the tag narrows the list.
  expect(byName.runs.map((r) => r.automation_id)).toEqual([id("smoke draft"), id("smoke b")]);
  const before = (await json<{ data: unknown[] }>(await s.call("GET", `/projects/${project}/runs?limit=200`))).data.length;
  const cases: [Record<string, unknown>, string][] = [
    [{}, "body"],
    [{ automations: ["no such automation"] }, "body.automations.0"],
    [{ feature: "no such feature" }, "body.feature"],
    [{ only_failed: true }, "body.only_failed"],
    [{ tags: ["smoke"], from_group_run: "grn_x" }, "body.from_group_run"],
    [{ tags: ["smoke"], environment: "nowhere" }, "body.environment"],
    [{ tags: ["smoke"], metadata: { "bad key": "x" } }, "body.metadata.bad key"],
    [{ tags: ["smoke"], variables: { WHO: "x" }, secrets: { WHO: "y-long-enough" } }, "body.variables.WHO"],
  ];
  for (const [body, path] of cases) {
    const res = await s.call("POST", `/projects/${project}/runs`, body);
    expect(res.status).toBe(400);
    const err = (await res.json()) as { error: string; details: { path: string }[] };
    expect(err.error).toBe("invalid_request");
    expect(err.details.map((d) => d.path)).toContain(path);
  }
  expect((await json<{ data: unknown[] }>(await s.call("GET", `/projects/${project}/runs?limit=200`))).data.length).toBe(before);
  expect((await s.call("POST", `/projects/${project}/runs`, { tags: ["nothing-has-this"] })).status).toBe(409);
});

test("per-run variables override the environment's for that run only; one may not shadow a secret (400, nothing queued)", async () => {
  const gr = await json<GroupRun>(
    await s.call("POST", `/projects/${project}/runs`, { automations: ["smoke a"], environment: "test", variables: { WHO: "ci" } }),
    202,
  );
  expect(gr.variables).toEqual({ WHO: "ci" });
  expect((await groupRunToEnd(gr.id)).status).toBe("passed");
  expect(target.seen.some((r) => r.path === "/health?who=ci&a")).toBe(true);
  const env = await json<{ variables: Record<string, string> }>(await s.call("GET", `/projects/${project}/environments/test`));
  expect(env.variables.WHO).toBe("env");

  const single = await json<{ id: string; variables: Record<string, string> }>(
    await s.call("POST", `/projects/${project}/automations/smoke%20a/run`, { environment: "test", variables: { WHO: "single" } }),
    202,
  );
  expect(single.variables).toEqual({ WHO: "single" });
  expect((await waitForRun(s, project, single.id)).status).toBe("passed");
  expect(target.seen.some((r) => r.path === "/health?who=single&a")).toBe(true);

  const shadow = await s.call("POST", `/projects/${project}/automations/smoke%20a/run`, { environment: "test", variables: { TOKEN: "x" } });
  expect(shadow.status).toBe(400);
  const err = (await shadow.json()) as { message: string; details: { path: string }[] };
  expect(err.message).toContain('cannot shadow a secret of the environment "test"');
  expect(err.details.map((d) => d.path)).toEqual(["body.variables.TOKEN"]);
  const runs = await json<{ data: { id: string }[] }>(await s.call("GET", `/projects/${project}/automations/smoke%20a/runs`));
  expect(runs.data[0]?.id).toBe(single.id);
});

test("a one-run secret reaches the step, is masked in the results and only its name is on the run", async () => {
  const a = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/automations`, {
      name: "uses secret",
      kind: "http",
      steps: [{ request: { url: "/echo", headers: { "x-one-run": "{{ONE_RUN}}" } }, expect: [{ status: 200 }] }],
    }),
    201,
  );
  const run = await json<{ id: string; one_run_secrets: string[] }>(
    await s.call("POST", `/projects/${project}/automations/${a.id}/run`, { environment: "test", secrets: { ONE_RUN: "one-run-secret-value" } }),
    202,
  );
  expect(run.one_run_secrets).toEqual(["ONE_RUN"]);
  const done = await waitForRun(s, project, run.id);
  expect(done.status).toBe("passed");
  expect(target.seen.some((r) => r.headers["x-one-run"] === "one-run-secret-value")).toBe(true);
  expect(JSON.stringify(done)).not.toContain("one-run-secret-value");
});

test("re-run failed: from_group_run with only_failed runs the failures again with that group run's environment, variables and metadata", async () => {
  const gr = await json<GroupRun>(
    await s.call("POST", `/projects/${project}/runs`, { tags: ["flaky", "api"], environment: "test", variables: { WHO: "first" }, metadata: { pr: "7" } }),
    202,
  );
  const ended = await groupRunToEnd(gr.id);
  expect(ended.status).toBe("failed");
  const again = await json<GroupRun>(await s.call("POST", `/projects/${project}/runs`, { from_group_run: gr.id, only_failed: true }), 202);
  expect(again.runs.map((r) => r.automation_id)).toEqual([id("fails")]);
  expect(again.environment_id).toBe(ended.environment_id);
  expect(again.variables).toEqual({ WHO: "first" });
  expect(again.metadata).toEqual({ pr: "7" });
  const all = await json<GroupRun>(await s.call("POST", `/projects/${project}/runs`, { from_group_run: gr.id, metadata: { pr: "8" } }), 202);
  expect(all.runs).toHaveLength(2);
  expect(all.metadata).toEqual({ pr: "8" });
});

test("re-run failed of a group run still going is a 409 saying it has not ended: its later failures would be left out", async () => {
  const slow = await automation("slow one", "/slow?ms=1500");
  const gr = await json<GroupRun>(await s.call("POST", `/projects/${project}/runs`, { automations: [slow, id("fails")], environment: "test" }), 202);
  // "fails" may have failed already; "slow one" is still running.
  const early = await s.call("POST", `/projects/${project}/runs`, { from_group_run: gr.id, only_failed: true });
  expect(early.status).toBe(409);
  const body = (await early.json()) as { error: string; message: string };
  expect(body.error).toBe("conflict");
  expect(body.message).toContain(`group run ${gr.id} has not ended`);
  expect((await groupRun(gr.id)).runs.length).toBe(2);
  const ended = await groupRunToEnd(gr.id);
  expect(ended.status).toBe("failed");
  const again = await json<GroupRun>(await s.call("POST", `/projects/${project}/runs`, { from_group_run: gr.id, only_failed: true }), 202);
  expect(again.runs.map((r) => r.automation_id)).toEqual([id("fails")]);
});

test("environments: variables_merge changes only the names it gives (null removes one); with variables it is a 400", async () => {
  await json(await s.call("POST", `/projects/${project}/environments`, { name: "merge", variables: { A: "1", B: "2" } }), 201);
  const merged = await json<{ variables: Record<string, string> }>(
    await s.call("PATCH", `/projects/${project}/environments/merge`, { variables_merge: { B: "20", C: "3", A: null } }),
  );
  expect(merged.variables).toEqual({ B: "20", C: "3" });
  const both = await s.call("PATCH", `/projects/${project}/environments/merge`, { variables: { X: "1" }, variables_merge: { Y: "2" } });
  expect(both.status).toBe(400);
  const replaced = await json<{ variables: Record<string, string> }>(
    await s.call("PATCH", `/projects/${project}/environments/merge`, { variables: { X: "1" } }),
  );
  expect(replaced.variables).toEqual({ X: "1" });
});

test("a sequential group runs one at a time in order: the next is queued only when the previous ended", async () => {
  const one = await automation("hold one", "/hold/seq-1");
  const two = await automation("hold two", "/hold/seq-2");
  const g = await json<{ id: string; mode: string }>(
    await s.call("POST", `/projects/${project}/groups`, { name: "in order", automation_ids: [one, two], mode: "sequential" }),
    201,
  );
  expect(g.mode).toBe("sequential");
  const started = await json<GroupRun>(await s.call("POST", `/projects/${project}/groups/in%20order/run`, { environment: "test" }), 202);
  expect(started.runs.map((r) => r.automation_id)).toEqual([one]);
  expect(started.summary.total).toBe(2);
  expect(await waitUntil(() => target.held("seq-1").length === 1, 20_000)).toBe(true);
  // Two workers are free, yet the second is not even queued while the first holds.
  const during = await groupRun(started.id);
  expect(during.runs.map((r) => r.automation_id)).toEqual([one]);
  expect(during.summary.queued).toBe(1);
  expect(target.held("seq-2")).toEqual([]);
  target.release("seq-1");
  expect(await waitUntil(() => target.held("seq-2").length === 1, 20_000)).toBe(true);
  const firstEnd = target.held("seq-1")[0]?.end ?? Number.POSITIVE_INFINITY;
  expect(target.held("seq-2")[0]?.start ?? 0).toBeGreaterThanOrEqual(firstEnd);
  target.release("seq-2");
  const ended = await groupRunToEnd(started.id);
  expect(ended.status).toBe("passed");
  expect(ended.runs.map((r) => r.automation_id)).toEqual([one, two]);
});

test("a sequential group with stop_on_failure stops at the first run that does not pass: the rest end cancelled, never sent", async () => {
  const after = await automation("after failure", "/health?never-sent");
  await json(
    await s.call("POST", `/projects/${project}/groups`, { name: "stops", automation_ids: [id("fails"), after], mode: "sequential", stop_on_failure: true }),
    201,
  );
  const started = await json<GroupRun>(await s.call("POST", `/projects/${project}/groups/stops/run`, { environment: "test" }), 202);
  const ended = await groupRunToEnd(started.id);
  expect(ended.status).toBe("failed");
  expect(ended.runs.map((r) => [r.automation_id, r.status])).toEqual([
    [id("fails"), "failed"],
    [after, "cancelled"],
  ]);
  expect(ended.runs[1]?.error).toContain("stop_on_failure");
  expect(target.seen.some((r) => r.path === "/health?never-sent")).toBe(false);

  // Without stop_on_failure the group goes on after a failure.
  await json(await s.call("PATCH", `/projects/${project}/groups/stops`, { stop_on_failure: false }), 200);
  const goesOn = await groupRunToEnd((await json<GroupRun>(await s.call("POST", `/projects/${project}/groups/stops/run`, { environment: "test" }), 202)).id);
  expect(goesOn.runs.map((r) => r.status)).toEqual(["failed", "passed"]);
});

test("a sequential group run's later runs get its one-run secrets and per-run variables too", async () => {
  const first = await automation("seq first", "/health?seq-first={{WHO}}");
  const later = await json<{ id: string }>(
    await s.call("POST", `/projects/${project}/automations`, {
      name: "seq later",
      kind: "http",
      steps: [{ request: { url: "/echo?seq-later={{WHO}}", headers: { "x-seq": "{{SEQ_KEY}}" } }, expect: [{ status: 200 }] }],
    }),
    201,
  );
  await json(await s.call("POST", `/projects/${project}/groups`, { name: "seq secrets", automation_ids: [first, later.id], mode: "sequential" }), 201);
  const started = await json<GroupRun>(
    await s.call("POST", `/projects/${project}/groups/seq%20secrets/run`, {
      environment: "test",
      variables: { WHO: "seq" },
      secrets: { SEQ_KEY: "sequential-secret-value" },
    }),
    202,
  );
  const ended = await groupRunToEnd(started.id);
  expect(ended.runs.map((r) => r.status)).toEqual(["passed", "passed"]);
  expect(target.seen.some((r) => r.path === "/echo?seq-later=seq" && r.headers["x-seq"] === "sequential-secret-value")).toBe(true);
  expect(JSON.stringify(ended)).not.toContain("sequential-secret-value");
});
