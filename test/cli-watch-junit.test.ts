// `--junit` when the watch stops before the end (--watch-timeout, Ctrl+C): the report is written anyway, with the
// finished runs' verdicts and the unfinished runs as skipped, so the CI shows what is known (CLI from source).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

// Each test runs the CLI from source and waits for a run held by the target.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;
let target: TargetApp;
let groupId = "";
const MAIN = join(import.meta.dir, "..", "src", "main.ts");

type Case = { name: string; skipped?: { message: string }; failure?: unknown; error?: unknown };

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer();
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "ci" });
  const post = async (path: string, body: unknown) => {
    const r = await s.call("POST", path, body);
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string };
  };
  await post("/projects", { name: "CI" });
  await post("/projects/ci/environments", { name: "staging", variables: { BASE_URL: target.url } });
  // An environment no runner serves: its runs stay queued.
  await post("/projects/ci/environments", { name: "nowhere", variables: { BASE_URL: target.url }, runner_labels: ["nowhere"] });
  const passing = await post("/projects/ci/automations", {
    name: "passing",
    kind: "http",
    steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }],
  });
  // Each test holds its own key: the held run stays running until the test releases it.
  const held = await post("/projects/ci/automations", {
    name: "held",
    kind: "http",
    steps: [{ request: { url: "/hold/{{HOLD}}?ms=0" }, expect: [{ status: 200 }] }],
  });
  groupId = (await post("/projects/ci/groups", { name: "nightly", automation_ids: [passing.id, held.id] })).id;
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop();
});

/** The report's test cases by name, once it is checked to be well-formed XML. */
function casesOf(file: string): { suite: Record<string, string>; cases: Map<string, Case> } {
  const xml = readFileSync(file, "utf8");
  expect(XMLValidator.validate(xml)).toBe(true);
  const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml);
  const suite = doc.testsuites.testsuite;
  const list = (Array.isArray(suite.testcase) ? suite.testcase : [suite.testcase]) as Case[];
  return { suite, cases: new Map(list.map((c) => [c.name, c])) };
}

/** Lets the held run end and waits for its group run to end, so the next test starts from an idle server. */
async function releaseAndFinish(key: string, groupRunId: string): Promise<void> {
  target.release(key);
  for (let i = 0; ; i++) {
    const gr = (await (await s.call("GET", `/projects/ci/group-runs/${groupRunId}?wait=10`)).json()) as { status: string };
    if (!["queued", "running"].includes(gr.status)) return;
    if (i > 20) throw new Error("the group run never ended");
  }
}

test("--watch-timeout passing before the group run ends still writes the JUnit report: finished runs as they ended, the others skipped", async () => {
  // Two seconds: long enough for the passing run to end on a busy machine, the held one never ends before its release.
  const watch = ["--watch", "--junit", "report.xml", "--watch-timeout", "2s", "--json"];
  const r = await cli.run(["groups", "run", groupId, "--env", "staging", "--var", "HOLD=timeout", ...watch]);
  const groupRun = JSON.parse(r.stdout) as { id: string; status: string; runs: { id: string; automation_name: string }[] };
  try {
    expect({ code: r.code, status: groupRun.status }).toEqual({ code: 7, status: "running" });
    expect(r.stderr).toContain(`svc: stopped following after --watch-timeout 2s: group run ${groupRun.id} running (1/2 runs done, 1 passed)`);
    expect(r.stderr).toContain("wrote the JUnit report to report.xml with 1 run unfinished (reported as skipped)\n");
    const file = join(cli.cwd, "report.xml");
    expect(existsSync(file)).toBe(true);
    const { suite, cases } = casesOf(file);
    expect({ tests: suite.tests, failures: suite.failures, errors: suite.errors, skipped: suite.skipped }).toEqual({
      tests: "2",
      failures: "0",
      errors: "0",
      skipped: "1",
    });
    const passed = cases.get("passing");
    expect(passed).toBeDefined();
    expect(passed?.skipped ?? passed?.failure ?? passed?.error).toBeUndefined();
    const heldRun = groupRun.runs.find((run) => run.automation_name === "held");
    expect(cases.get("held")?.skipped?.message).toBe(`still running when this report was made (run ${heldRun?.id})`);
  } finally {
    await releaseAndFinish("timeout", groupRun.id);
  }
});

test("a group run that ends while watched writes the server's JUnit report byte for byte, as before", async () => {
  target.release("ends");
  const r = await cli.run(["groups", "run", groupId, "--env", "staging", "--var", "HOLD=ends", "--junit", "done.xml", "--watch-timeout", "30s", "--json"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain("wrote the JUnit report to done.xml\n");
  const { id } = JSON.parse(r.stdout) as { id: string };
  const served = await (await s.call("GET", `/projects/ci/group-runs/${id}/junit`)).text();
  expect(readFileSync(join(cli.cwd, "done.xml"), "utf8")).toBe(served);
  expect(casesOf(join(cli.cwd, "done.xml")).suite).toMatchObject({ tests: "2", failures: "0", errors: "0", skipped: "0" });
});

test("a sequential group run's automations not queued yet are in the report as skipped, not run yet; the line says how many", async () => {
  const ids = ((await (await s.call("GET", "/projects/ci/automations")).json()) as { data: { id: string; name: string }[] }).data;
  const byName = (name: string) => ids.find((a) => a.name === name)?.id;
  const g = await s.call("POST", "/projects/ci/groups", { name: "in order", mode: "sequential", automation_ids: [byName("held"), byName("passing")] });
  expect(g.status).toBe(201);
  const group = (await g.json()) as { id: string };
  const watch = ["--junit", "sequence.xml", "--watch-timeout", "1s", "--json"];
  const r = await cli.run(["groups", "run", group.id, "--env", "staging", "--var", "HOLD=sequence", ...watch]);
  const groupRun = JSON.parse(r.stdout) as { id: string };
  try {
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("wrote the JUnit report to sequence.xml with 2 runs unfinished (reported as skipped; 1 of them not queued yet)\n");
    const { suite, cases } = casesOf(join(cli.cwd, "sequence.xml"));
    expect({ tests: suite.tests, skipped: suite.skipped }).toEqual({ tests: "2", skipped: "2" });
    expect(cases.get("held")?.skipped?.message).toMatch(/^still running when this report was made \(run run_\w+\)$/);
    expect(cases.get("passing")?.skipped?.message).toMatch(/^not queued yet when this report was made/);
  } finally {
    await releaseAndFinish("sequence", groupRun.id);
  }
});

test("--watch-timeout on a single run not started yet: its report has it skipped as queued", async () => {
  const r = await cli.run(["automations", "run", "passing", "--env", "nowhere", "--junit", "single.xml", "--watch-timeout", "1s", "--json"]);
  const run = JSON.parse(r.stdout) as { id: string; status: string };
  try {
    expect({ code: r.code, status: run.status }).toEqual({ code: 7, status: "queued" });
    expect(r.stderr).toContain("wrote the JUnit report to single.xml with 1 run unfinished (reported as skipped)\n");
    const { suite, cases } = casesOf(join(cli.cwd, "single.xml"));
    expect({ tests: suite.tests, skipped: suite.skipped }).toEqual({ tests: "1", skipped: "1" });
    expect(cases.get("passing")?.skipped?.message).toBe(`still queued when this report was made (run ${run.id})`);
  } finally {
    expect((await s.call("POST", `/projects/ci/runs/${run.id}/cancel`)).status).toBe(200);
  }
});

test("on a terminal, --watch-timeout stops the spinner and exits 7 with the report written (its timer kept the process alive)", async () => {
  const file = join(cli.cwd, "tty.xml");
  const command = `${process.execPath} ${MAIN} automations run passing --env nowhere --junit ${file} --watch-timeout 1s > /dev/null`;
  const proc = Bun.spawn(["script", "-qec", command, "/dev/null"], {
    cwd: cli.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cli.cwd, SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "ci" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const hung = setTimeout(() => proc.kill(), 15_000);
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  clearTimeout(hung);
  const runId = /run (run_\w+) /.exec(out)?.[1];
  try {
    expect(code).toBe(7);
    expect(out).toContain(`wrote the JUnit report to ${file} with 1 run unfinished (reported as skipped)`);
    expect(casesOf(file).cases.get("passing")?.skipped?.message).toBe(`still queued when this report was made (run ${runId})`);
  } finally {
    if (runId) await s.call("POST", `/projects/ci/runs/${runId}/cancel`);
  }
});

test.each([
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const)(
  "%s (Ctrl+C, or a CI cancelling the job) while --junit follows a group run writes the report of what is known, then exits %d",
  async (signal, exitCode) => {
    const file = join(cli.cwd, `${signal}.xml`);
    const proc = Bun.spawn([process.execPath, MAIN, "groups", "run", groupId, "--env", "staging", "--var", `HOLD=${signal}`, "--junit", file], {
      cwd: cli.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cli.cwd, SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "ci" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let stderr = "";
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of proc.stderr) stderr += decoder.decode(chunk, { stream: true });
    })();
    // The watch is under way (its first progress line), the passing run has ended and the held one is at its target.
    const groupRunId = async () => {
      for (let i = 0; ; i++) {
        const id = /group run (grn_\w+)/.exec(stderr)?.[1];
        if (id) return id;
        if (i > 500) throw new Error(`the watch never started: ${stderr}`);
        await Bun.sleep(20);
      }
    };
    const id = await groupRunId();
    for (let i = 0; target.held(signal).length === 0; i++) {
      if (i > 500) throw new Error("the held run never reached its target");
      await Bun.sleep(20);
    }
    for (let i = 0; ((await (await s.call("GET", `/projects/ci/group-runs/${id}`)).json()) as { summary: { passed: number } }).summary.passed !== 1; i++) {
      if (i > 500) throw new Error("the passing run never ended");
      await Bun.sleep(20);
    }
    const t0 = performance.now();
    proc.kill(signal);
    const code = await proc.exited;
    await reading;
    try {
      expect(code).toBe(exitCode);
      // At once, not after the read under way (held up to 5 s by the server), and that read is not retried.
      expect(performance.now() - t0).toBeLessThan(3000);
      expect(stderr).not.toContain("retrying");
      expect(stderr).toContain(`svc: interrupted: group run ${id} running (1/2 runs done, 1 passed); it goes on on the server\n`);
      expect(stderr).toContain(`wrote the JUnit report to ${file} with 1 run unfinished (reported as skipped)\n`);
      const { suite, cases } = casesOf(file);
      expect({ tests: suite.tests, skipped: suite.skipped, failures: suite.failures }).toEqual({ tests: "2", skipped: "1", failures: "0" });
      expect(cases.get("held")?.skipped?.message).toMatch(/^still running when this report was made \(run run_\w+\)$/);
    } finally {
      await releaseAndFinish(signal, id);
    }
  },
);

test("a group run cancelled while watched: the report shows the steps its running run had reached when stopped", async () => {
  const watching = cli.run(["groups", "run", groupId, "--env", "staging", "--var", "HOLD=cancelled", "--junit", "cancelled.xml", "--json"]);
  for (let i = 0; target.held("cancelled").length === 0; i++) {
    if (i > 400) throw new Error("the held run never started");
    await Bun.sleep(50);
  }
  const latest = (await (await s.call("GET", "/projects/ci/group-runs?limit=1")).json()) as { data: { id: string }[] };
  const id = String(latest.data[0]?.id);
  expect((await s.call("POST", `/projects/ci/group-runs/${id}/cancel`)).status).toBe(200);
  const r = await watching;
  try {
    expect(r.code).toBe(1);
    const { cases } = casesOf(join(cli.cwd, "cancelled.xml"));
    const held = cases.get("held") as Case & { "system-out"?: string };
    expect(held.skipped?.message).toBe("cancelled: cancelled by request with its group run");
    expect(String(held["system-out"])).toContain("stopped: the run was cancelled");
  } finally {
    target.release("cancelled");
  }
});

test("--junit into a folder that does not exist yet makes it; a folder in the file's place is refused before anything starts (exit 2)", async () => {
  target.release("folders");
  const r = await cli.run(["groups", "run", groupId, "--env", "staging", "--var", "HOLD=folders", "--junit", "reports/ci/junit.xml", "--json"]);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain("wrote the JUnit report to reports/ci/junit.xml\n");
  expect(casesOf(join(cli.cwd, "reports/ci/junit.xml")).suite).toMatchObject({ tests: "2", failures: "0" });
  const before = (await (await s.call("GET", "/projects/ci/group-runs?limit=100")).json()) as { data: unknown[] };
  const refused = await cli.run(["groups", "run", groupId, "--env", "staging", "--junit", "reports", "--json"]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("cannot write the JUnit report to reports: it is a folder");
  // svc test too: its folder's group run is not started when its report has nowhere to go.
  mkdirSync(join(cli.cwd, "suite"), { recursive: true });
  writeFileSync(join(cli.cwd, "suite", "health.yaml"), "name: health\nkind: http\nsteps:\n  - request: { url: /health }\n");
  const tested = await cli.run(["test", "suite", "--env", "staging", "--junit", "reports", "--json"]);
  expect({ code: tested.code, stdout: tested.stdout }).toEqual({ code: 2, stdout: "" });
  expect(tested.stderr).toContain("cannot write the JUnit report to reports: it is a folder");
  const after = (await (await s.call("GET", "/projects/ci/group-runs?limit=100")).json()) as { data: unknown[] };
  expect(after.data.length).toBe(before.data.length);
});

test("svc group-runs watch follows a group run started elsewhere to its end: exit code, final record, JUnit report", async () => {
  const started = await s.call("POST", `/projects/ci/groups/${groupId}/run`, { environment: "staging", variables: { HOLD: "elsewhere" } });
  expect(started.status).toBe(202);
  const { id } = (await started.json()) as { id: string };
  const watching = cli.run(["group-runs", "watch", id, "--junit", "elsewhere/report.xml", "--json"]);
  await Bun.sleep(300);
  target.release("elsewhere");
  const r = await watching;
  expect(r.code).toBe(0);
  expect((JSON.parse(r.stdout) as { id: string; status: string }).status).toBe("passed");
  expect(readFileSync(join(cli.cwd, "elsewhere/report.xml"), "utf8")).toBe(await (await s.call("GET", `/projects/ci/group-runs/${id}/junit`)).text());
  const unknown = await cli.run(["group-runs", "watch", "grn_nosuch"]);
  expect(unknown.code).toBe(4);
});

test("a quarantined automation: its failed run does not fail svc runs watch, its cancelled run does (exit 1), as in a group run", async () => {
  const made = await s.call("POST", "/projects/ci/automations", {
    name: "quarantined held",
    kind: "http",
    environment: "staging",
    steps: [{ request: { url: "/hold/{{HOLD}}?ms=0" }, expect: [{ status: 201 }] }],
  });
  expect([made.status, made.status === 201 ? "" : await made.text()]).toEqual([201, ""]);
  const { id } = (await made.json()) as { id: string };
  expect((await s.call("PATCH", `/projects/ci/automations/${id}`, { quarantined: true })).status).toBe(200);
  const start = async (hold: string) => {
    const r = await s.call("POST", `/projects/ci/automations/${id}/run`, { variables: { HOLD: hold } });
    expect(r.status).toBe(202);
    return ((await r.json()) as { id: string }).id;
  };
  target.release("q-fails");
  const failed = await cli.run(["runs", "watch", await start("q-fails"), "--json"]);
  expect({ code: failed.code, status: (JSON.parse(failed.stdout) as { status: string }).status }).toEqual({ code: 0, status: "failed" });

  const runId = await start("q-cancelled");
  const watching = cli.run(["runs", "watch", runId, "--json"]);
  for (let i = 0; target.held("q-cancelled").length === 0; i++) {
    if (i > 400) throw new Error("the held run never started");
    await Bun.sleep(50);
  }
  expect((await s.call("POST", `/projects/ci/runs/${runId}/cancel`)).status).toBe(200);
  const cancelled = await watching;
  target.release("q-cancelled");
  expect({ code: cancelled.code, status: (JSON.parse(cancelled.stdout) as { status: string }).status }).toEqual({ code: 1, status: "cancelled" });
});
