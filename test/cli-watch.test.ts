// `--watch`: the one command a CI pipeline needs, against a real server whose run engine calls a local target.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type CliSandbox, cliSandbox } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";

// Each test spawns the compiled binary several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: CliSandbox;
let target: ReturnType<typeof Bun.serve>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/ok") return Response.json({ ok: true });
      if (path === "/slow-ok") {
        await Bun.sleep(1500);
        return Response.json({ ok: true });
      }
      if (path === "/late-ok") {
        await Bun.sleep(2700);
        return Response.json({ ok: true });
      }
      return Response.json({ ok: false }, { status: 500 });
    },
  });
  s = await startTestServer();
  cli = cliSandbox({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "ci" });
  const post = async (path: string, body: unknown) => {
    const r = await s.call("POST", path, body);
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string };
  };
  await post("/projects", { name: "CI" });
  await post("/projects/ci/environments", { name: "staging", variables: { BASE_URL: `http://127.0.0.1:${target.port}` } });
  for (const [name, url] of [
    ["passing", "/ok"],
    ["failing", "/fail"],
    ["slow", "/slow-ok"],
  ] as const) {
    ids[name] = (
      await post("/projects/ci/automations", { name, kind: "http", steps: [{ name: `get ${url}`, request: { url }, expect: [{ status: 200 }] }] })
    ).id;
  }
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop(true);
});

test("automations run --watch on a passing automation: exit 0, progress lines, the final run printed", async () => {
  const r = await cli.run(["automations", "run", ids.passing ?? "", "--env", "staging", "--watch"]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({
    code: 0,
    stderr: expect.stringMatching(/run run_\w+ passed \(1\/1 steps, 0 failed\) in [\d.]+ m?s\n$/),
  });
  expect(r.stderr).not.toContain("\x1b[");
  expect(r.stdout).toContain("status");
  expect(r.stdout).toContain("passed");
  expect(r.stdout).toContain("get /ok");
});

test("automations run --watch on a failing automation: exit 1 and the failed step with expected and actual", async () => {
  const r = await cli.run(["automations", "run", ids.failing ?? "", "--env", "staging", "--watch"]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/run run_\w+ failed/);
  expect(r.stdout).toContain("get /fail");
  expect(r.stdout).toMatch(/expected 200.*500|500.*expected 200/);
});

test("--watch --json prints only the final run, exactly as the server sent it, on stdout", async () => {
  const r = await cli.run(["automations", "run", ids.slow ?? "", "--env", "staging", "--watch", "--json"]);
  expect(r.code).toBe(0);
  const run = JSON.parse(r.stdout);
  expect(run).toMatchObject({ status: "passed", trigger: "cli", summary: { steps: 1, passed: 1 } });
  // The finished run no longer changes: a GET now answers the same bytes the last poll did.
  const body = await (await s.call("GET", `/projects/ci/runs/${run.id}`)).text();
  expect(r.stdout).toBe(`${body}\n`);
  // Plain progress lines while it ran (not a TTY): at least the start and the end.
  expect(r.stderr.trim().split("\n").length).toBeGreaterThanOrEqual(2);
});

test("runs watch follows an existing run; groups run --watch follows a group run", async () => {
  const started = await (await s.call("POST", `/projects/ci/automations/${ids.failing}/run`, { environment: "staging" })).json();
  const watched = await cli.run(["runs", "watch", started.id]);
  expect(watched.code).toBe(1);
  expect(watched.stderr).toContain(`run ${started.id} failed`);
  const group = await (await s.call("POST", "/projects/ci/groups", { name: "smoke", automation_ids: [ids.passing] })).json();
  const r = await cli.run(["groups", "run", group.id, "--env", "staging", "--watch", "--json"]);
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ status: "passed", summary: { total: 1, passed: 1 } });
});

test("groups run --watch exits within a second of the group run's end, start-up included (it long-polls, not polls)", async () => {
  const late = (await s.call("POST", "/projects/ci/automations", { name: "late", kind: "http", steps: [{ request: { url: "/late-ok" } }] })).json();
  const group = await (await s.call("POST", "/projects/ci/groups", { name: "late ones", automation_ids: [(await late).id, ids.passing] })).json();
  const r = await cli.run(["groups", "run", group.id, "--env", "staging", "--watch", "--json"]);
  const exitedAt = Date.now();
  expect(r.code).toBe(0);
  const final = JSON.parse(r.stdout) as { status: string; finished_at: string };
  expect(final.status).toBe("passed");
  // The server's clock and this one are the same machine's. Exit time is taken once the output is read: never early.
  expect(exitedAt - Date.parse(final.finished_at)).toBeLessThan(1000);
});

test("runs show --wait N answers once the run has ended", async () => {
  const started = await (await s.call("POST", `/projects/ci/automations/${ids.slow}/run`, { environment: "staging" })).json();
  const shown = await cli.json<{ status: string }>(["runs", "show", started.id, "--wait", "30"]);
  expect(shown.status).toBe("passed");
});

test("generate --watch follows the generation to its end and prints what it made", async () => {
  const feature = await (
    await s.call("POST", "/projects/ci/features", {
      name: "Health",
      acceptance_criteria: 'Feature: Health\n  Scenario: ok answers\n    When I send GET "/ok"\n    Then the response status should be 200\n',
    })
  ).json();
  const r = await cli.run(["generate", feature.id, "--strategy", "gherkin", "--watch", "--json"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toMatch(/generation gen_\w+ succeeded/);
  const generation = JSON.parse(r.stdout);
  expect(generation).toMatchObject({ feature_id: feature.id, status: "succeeded", automation_ids: [expect.stringMatching(/^aut_/)] });
  expect(r.stdout).toBe(`${await (await s.call("GET", `/projects/ci/features/${feature.id}/generation`)).text()}\n`);
});

test("generate --watch on a generation that fails: exit 1, the failure on stderr and the record with its error on stdout", async () => {
  // Criteria that are not Gherkin: the gherkin strategy cannot run, so the job ends failed.
  const feature = await (
    await s.call("POST", "/projects/ci/features", { name: "Prose", acceptance_criteria: "- users can sign in\n- users can sign out" })
  ).json();
  const r = await cli.run(["generate", feature.id, "--strategy", "gherkin", "--watch"]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/generation gen_\w+ failed/);
  expect(r.stdout).toContain("failed");
  expect(r.stdout).toContain("the gherkin strategy cannot run");
  const asJson = await cli.run(["generate", feature.id, "--strategy", "gherkin", "--watch", "--json"]);
  expect(asJson.code).toBe(1);
  expect(JSON.parse(asJson.stdout)).toMatchObject({
    feature_id: feature.id,
    status: "failed",
    automation_ids: [],
    error: expect.stringContaining("no Gherkin scenario"),
  });
});

test("on a terminal, --watch draws a spinner line in place and ends with a mark", async () => {
  const binary = `${import.meta.dir}/../dist/svc`;
  const proc = Bun.spawn(["script", "-qec", `${binary} automations run ${ids.slow} --env staging --watch > /dev/null`, "/dev/null"], {
    cwd: cli.cwd,
    env: { PATH: "/usr/bin:/bin", ...cli.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(out).toContain("\r\x1b[K");
  expect(out).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] run run_\w+ /);
  expect(out).toMatch(/✓\x1b\[0m run run_\w+ \x1b\[32mpassed/);
});

test("a watch whose key is revoked mid-way ends with exit 3 (also on a terminal, spinner stopped)", async () => {
  const other = await s.userWithKey("watcher@acme.test", "acme", "member");
  const binary = `${import.meta.dir}/../dist/svc`;
  const proc = Bun.spawn(["script", "-qec", `${binary} automations run ${ids.slow} --env staging --watch`, "/dev/null"], {
    cwd: cli.cwd,
    env: { PATH: "/usr/bin:/bin", ...cli.env, SVC_API_KEY: other.key },
    stdout: "pipe",
    stderr: "pipe",
  });
  await Bun.sleep(700);
  expect((await s.call("DELETE", `/keys/${other.keyId}`, undefined, other.key)).status).toBe(204);
  const started = performance.now();
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(3);
  expect(out).toContain("unauthorized");
  expect(performance.now() - started).toBeLessThan(10_000);
});

test("--junit FILE follows the run or group run to its end and writes its JUnit report, for the CI to read", async () => {
  const { readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const single = await cli.run(["automations", "run", ids.passing ?? "", "--env", "staging", "--junit", "single.xml"]);
  expect(single.code).toBe(0);
  expect(single.stderr).toContain("wrote the JUnit report to single.xml");
  const one = readFileSync(join(cli.cwd, "single.xml"), "utf8");
  expect(one).toContain("<testsuite");
  expect(one).toMatch(/failures="0"/);
  expect(one).toContain('name="passing"');

  const g = await s.call("POST", "/projects/ci/groups", { name: "nightly", automation_ids: [ids.passing, ids.failing] });
  expect(g.status).toBe(201);
  const group = (await g.json()) as { id: string };
  const r = await cli.run(["groups", "run", group.id, "--env", "staging", "--junit", "group.xml"]);
  expect(r.code).toBe(1); // a failed group run still writes its report, and still fails the pipeline
  const xml = readFileSync(join(cli.cwd, "group.xml"), "utf8");
  expect(xml).toMatch(/tests="2"/);
  expect(xml).toMatch(/failures="1"/);
  expect(xml).toContain("expected 200, got 500");
});

test("automations and groups can be named instead of given by id; no match is not found, several a usage error", async () => {
  const byName = await cli.run(["automations", "run", "passing", "--env", "staging", "--watch", "--json"]);
  expect(byName.code).toBe(0);
  expect(JSON.parse(byName.stdout)).toMatchObject({ automation_id: ids.passing, status: "passed" });

  const g = await s.call("POST", "/projects/ci/groups", { name: "smoke suite", automation_ids: [ids.passing] });
  expect(g.status).toBe(201);
  const groupRun = await cli.run(["groups", "run", "smoke suite", "--env", "staging", "--watch", "--json"]);
  expect(groupRun.code).toBe(0);
  expect(JSON.parse(groupRun.stdout)).toMatchObject({ group_id: ((await g.json()) as { id: string }).id, status: "passed" });

  const unknown = await cli.run(["automations", "run", "no such test", "--env", "staging"]);
  expect(unknown.code).toBe(4); // a name that matches nothing is a 404 from the server, exit 4
  expect(unknown.stderr).toContain('no automation named "no such test" in project ci');

  // Names are unique in a project, so a name in CI always means one automation.
  const twin = await s.call("POST", "/projects/ci/automations", { name: "failing", kind: "http", steps: [{ request: { url: "/ok" } }] });
  expect(twin.status).toBe(409);
  const shown = await cli.run(["automations", "show", "failing", "--json"]);
  expect(shown.code).toBe(0);
  expect(JSON.parse(shown.stdout)).toMatchObject({ id: ids.failing ?? "missing" });
});

test("--watch-timeout stops following a run that has not ended: exit 7, where it stands, its JSON with --json; a bad duration is a usage error", async () => {
  // An environment no runner serves: its runs stay queued.
  const env = await s.call("POST", "/projects/ci/environments", {
    name: "nowhere",
    variables: { BASE_URL: `http://127.0.0.1:${target.port}` },
    runner_labels: ["nowhere"],
  });
  expect(env.status).toBe(201);
  const t0 = performance.now();
  const r = await cli.run(["automations", "run", ids.passing ?? "", "--env", "nowhere", "--watch-timeout", "2s", "--json"]);
  const took = performance.now() - t0;
  expect(r.code).toBe(7);
  expect(r.stderr).toMatch(
    /svc: stopped following after --watch-timeout 2s: run run_\w+ queued — waiting for a runner with the labels nowhere: none is connected; it goes on on the server\n/,
  );
  const run = JSON.parse(r.stdout) as { id: string; status: string };
  expect(run.status).toBe("queued");
  // Two seconds of following, start-up and a loaded machine allowed for.
  expect(took).toBeGreaterThan(1_900);
  expect(took).toBeLessThan(10_000);

  const bad = await cli.run(["runs", "watch", run.id, "--watch-timeout", "soon"]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('--watch-timeout takes a duration of at least 1s, such as 90s, 15m or 2h (not "soon")');
  // Refused before anything starts: no second run of the automation.
  const runsBefore = (await (await s.call("GET", `/projects/ci/runs?automation=${ids.passing}`)).json()).data.length;
  const refused = await cli.run(["automations", "run", ids.passing ?? "", "--env", "nowhere", "--watch-timeout", "0.5s"]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('(not "0.5s")');
  expect((await (await s.call("GET", `/projects/ci/runs?automation=${ids.passing}`)).json()).data.length).toBe(runsBefore);
  expect((await s.call("POST", `/projects/ci/runs/${run.id}/cancel`)).status).toBe(200);
});
