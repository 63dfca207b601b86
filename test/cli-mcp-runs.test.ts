// The cockpit's run features from the CLI (from source) and MCP: `svc run --tag … --env … --junit`, per-run
// --var/--secret, CI metadata filled from GitHub Actions / GitLab CI / Jenkins variables unless --no-ci-metadata,
// tag and metadata filters, sequential groups, and names wherever an id is taken.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { json, projectWithEnv } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(90_000);

let s: TestServer;
let target: TargetApp;
let project = "";
let base: Record<string, string> = {};
const GITHUB = {
  GITHUB_ACTIONS: "true",
  GITHUB_SHA: "0123abc",
  GITHUB_REF: "refs/pull/42/merge",
  GITHUB_HEAD_REF: "feature/login",
  GITHUB_REF_NAME: "42/merge",
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_REPOSITORY: "acme/shop",
  GITHUB_RUN_ID: "777",
};

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 2 } });
  ({ project } = await projectWithEnv(s, "CLI cockpit", { BASE_URL: target.url }));
  for (const [name, path, tags] of [
    ["cli smoke", "/health?who={{WHO}}", ["smoke"]],
    ["cli key", "/echo", ["smoke"]],
    ["cli other", "/health?other", ["nightly"]],
  ] as const) {
    const headers = name === "cli key" ? { "x-cli-key": "{{CLI_KEY}}" } : undefined;
    await json(
      await s.call("POST", `/projects/${project}/automations`, {
        name,
        kind: "http",
        tags,
        steps: [{ request: { url: path, headers }, expect: [{ status: 200 }] }],
      }),
      201,
    );
  }
  base = { SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: project };
});

afterAll(async () => {
  await s.stop();
  await target.stop();
});

async function cliIn(env: Record<string, string>, args: string[]) {
  const cli: SourceCli = sourceCli({ ...base, ...env });
  try {
    return await cli.run(args);
  } finally {
    cli.remove();
  }
}

test("svc run --tag smoke --env test --var --secret --junit: one group run, the report written, CI metadata from GitHub Actions", async () => {
  const cli = sourceCli({ ...base, ...GITHUB });
  try {
    const r = await cli.run([
      "run",
      "--tag",
      "smoke",
      "--env",
      "test",
      "--var",
      "WHO=cli",
      "--secret",
      "CLI_KEY=cli-secret-value",
      "--junit",
      "out.xml",
      "--json",
    ]);
    expect(r.code).toBe(0);
    const gr = JSON.parse(r.stdout) as { status: string; metadata: Record<string, string>; variables: Record<string, string>; runs: unknown[] };
    expect(gr.status).toBe("passed");
    expect(gr.runs).toHaveLength(2);
    expect(gr.variables).toEqual({ WHO: "cli" });
    expect(gr.metadata).toEqual({
      ci: "github-actions",
      commit: "0123abc",
      branch: "feature/login",
      build_url: "https://github.com/acme/shop/actions/runs/777",
      pr: "42",
    });
    expect(r.stdout).not.toContain("cli-secret-value");
    const junit = readFileSync(join(cli.cwd, "out.xml"), "utf8");
    expect(junit.match(/<testcase /g)?.length).toBe(2);
    expect(target.seen.some((x) => x.path === "/health?who=cli")).toBe(true);
    expect(target.seen.some((x) => x.headers["x-cli-key"] === "cli-secret-value")).toBe(true);

    const filtered = await cli.run(["runs", "list", "--metadata", "branch=feature/login", "--json"]);
    expect(filtered.code).toBe(0);
    expect((JSON.parse(filtered.stdout) as { data: unknown[] }).data).toHaveLength(2);
  } finally {
    cli.remove();
  }
});

test("--no-ci-metadata leaves CI variables out; --metadata given wins; GitLab CI and Jenkins are read too", async () => {
  const none = await cliIn({ ...GITHUB }, ["run", "--tag", "nightly", "--env", "test", "--no-ci-metadata", "--json"]);
  expect(none.code).toBe(0);
  expect((JSON.parse(none.stdout) as { metadata: Record<string, string> }).metadata).toEqual({});
  const gitlab = await cliIn(
    { GITLAB_CI: "true", CI_COMMIT_SHA: "feed", CI_COMMIT_REF_NAME: "main", CI_JOB_URL: "https://gitlab.example/job/1", CI_MERGE_REQUEST_IID: "9" },
    ["automations", "run", "cli other", "--env", "test", "--metadata", "branch=release", "--json"],
  );
  expect(gitlab.code).toBe(0);
  expect((JSON.parse(gitlab.stdout) as { metadata: Record<string, string> }).metadata).toEqual({
    ci: "gitlab-ci",
    commit: "feed",
    branch: "release",
    build_url: "https://gitlab.example/job/1",
    pr: "9",
  });
  const jenkins = await cliIn({ JENKINS_URL: "https://ci.example/", GIT_COMMIT: "beef", GIT_BRANCH: "origin/main", BUILD_URL: "https://ci.example/job/3/" }, [
    "automations",
    "run",
    "cli other",
    "--env",
    "test",
    "--json",
  ]);
  expect((JSON.parse(jenkins.stdout) as { metadata: Record<string, string> }).metadata).toEqual({
    ci: "jenkins",
    commit: "beef",
    branch: "main",
    build_url: "https://ci.example/job/3/",
  });
});

test("CLI: --tag filters automations, a sequential group is created with --mode, names are taken where ids are, and --help says so", async () => {
  const listed = await cliIn({}, ["automations", "list", "--tag", "nightly", "--json"]);
  expect((JSON.parse(listed.stdout) as { data: { name: string }[] }).data.map((a) => a.name)).toEqual(["cli other"]);
  const smoke = await json<{ id: string }>(await s.call("GET", `/projects/${project}/automations/cli%20smoke`));
  const group = await cliIn({}, ["groups", "create", "cli ordered", "--automation-ids", smoke.id, "--mode", "sequential", "--stop-on-failure", "--json"]);
  expect(group.code).toBe(0);
  expect(JSON.parse(group.stdout)).toMatchObject({ mode: "sequential", stop_on_failure: true });
  const runs = await cliIn({}, ["runs", "list", "--automation", "cli other", "--json"]);
  expect(runs.code).toBe(0);
  expect((JSON.parse(runs.stdout) as { data: unknown[] }).data.length).toBeGreaterThan(0);
  const help = await cliIn({}, ["runs", "list", "--help"]);
  expect(help.stdout).toContain("Automation id (aut_…) or exact name");
  const gen = await cliIn({}, ["generate", "--help"]);
  expect(gen.stdout).toContain("exact name");
  const run = await cliIn({}, ["run", "--help"]);
  expect(run.stdout).toContain("--tag");
  expect(run.stdout).toContain("--no-ci-metadata");
  expect(run.stdout).toContain("--from-group-run");
});

test("MCP: list_automations with tag, run_selection with variables and metadata, list_runs filtered by metadata", async () => {
  const home = tempDir("svc-mcp-");
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dir, "..", "src", "main.ts"), "mcp", "--project", project],
      env: { PATH: "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: `${home}/config`, SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stderr: "pipe",
    }),
  );
  try {
    const listed = await client.callTool({ name: "list_automations", arguments: { tag: ["NIGHTLY"] } });
    expect((listed.structuredContent as { data: { name: string }[] }).data.map((a) => a.name)).toEqual(["cli other"]);
    const started = await client.callTool({
      name: "run_selection",
      arguments: { automations: ["cli smoke"], environment: "test", variables: { WHO: "mcp" }, metadata: { branch: "mcp-branch" } },
    });
    expect(started.isError).not.toBe(true);
    const gr = started.structuredContent as { id: string; runs: { id: string }[]; variables: Record<string, string> };
    expect(gr.variables).toEqual({ WHO: "mcp" });
    const runs = await client.callTool({ name: "list_runs", arguments: { metadata: { branch: "mcp-branch" } } });
    expect((runs.structuredContent as { data: { id: string }[] }).data.map((r) => r.id)).toEqual(gr.runs.map((r) => r.id));
    const bad = await client.callTool({
      name: "run_selection",
      arguments: { automations: ["cli smoke"], environment: "test", variables: { WHO: "x" }, secrets: { WHO: "y-long-value" } },
    });
    expect(bad.isError).toBe(true);
    expect((bad.structuredContent as { error: string }).error).toBe("invalid_request");
    // Names are unique, and a group can be made sequential, over MCP too.
    const twin = await client.callTool({ name: "create_automation", arguments: { name: "cli smoke", kind: "http", steps: [{ request: { url: "/health" } }] } });
    expect(twin.isError).toBe(true);
    expect((twin.structuredContent as { error: string; message: string }).message).toContain('an automation named "cli smoke" already exists');
    const group = await client.callTool({ name: "create_group", arguments: { name: "mcp ordered", mode: "sequential", stop_on_failure: true } });
    expect(group.structuredContent).toMatchObject({ mode: "sequential", stop_on_failure: true });
  } finally {
    await client.close();
  }
});
