// `svc pull` then `svc apply` into another project gives the same project: an environment's protection, allowed hosts
// and runner labels, a group's mode and stop_on_failure, an automation's quarantine — with the API's rules for them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";

let s: TestServer;
let member: string;
const TOKEN = "s3cret-token-value";

beforeAll(async () => {
  s = await startTestServer();
  for (const slug of ["source", "copy", "checks"]) expect((await s.call("POST", "/projects", { name: slug, slug })).status).toBe(201);
  member = (await s.userWithKey("member@acme.test", "acme", "member")).key;
});
afterAll(async () => {
  await s.stop();
});

async function list(project: string, what: string) {
  return ((await (await s.call("GET", `/projects/${project}/${what}?limit=200`)).json()) as { data: Record<string, unknown>[] }).data;
}
const byName = (rows: Record<string, unknown>[], name: string) => rows.find((r) => r.name === name) ?? {};
const cliFor = (project: string, key = s.key): SourceCli => sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: key, SVC_PROJECT: project, TOKEN });
const step = (path: string) => [{ request: { method: "GET", url: `{{BASE_URL}}${path}` }, expect: [{ status: 200 }] }];

/** What a project holds of the round-tripped fields, by name (ids and times left out: they differ between projects). */
async function snapshot(project: string) {
  const auts = await list(project, "automations");
  const nameOf = new Map(auts.map((a) => [a.id, a.name]));
  return {
    environments: (await list(project, "environments"))
      .map((e) => ({
        name: e.name,
        variables: e.variables,
        secret_names: e.secret_names,
        protected: e.protected,
        allowed_hosts: e.allowed_hosts,
        runner_labels: e.runner_labels,
      }))
      .sort((a, b) => String(a.name).localeCompare(String(b.name))),
    groups: (await list(project, "groups"))
      .map((g) => ({ name: g.name, mode: g.mode, stop_on_failure: g.stop_on_failure, automations: (g.automation_ids as string[]).map((id) => nameOf.get(id)) }))
      .sort((a, b) => String(a.name).localeCompare(String(b.name))),
    automations: auts
      .map((a) => ({ name: a.name, status: a.status, quarantined: a.quarantined, steps: a.steps }))
      .sort((a, b) => String(a.name).localeCompare(String(b.name))),
  };
}

let pulled = "";

test("pull writes protection, allowed hosts, runner labels, group mode and quarantine; apply into a new project gives the same fields", async () => {
  const make = async (path: string, body: unknown) => expect((await s.call("POST", `/projects/source/${path}`, body)).status).toBe(201);
  await make("environments", {
    name: "prod",
    variables: { BASE_URL: "http://127.0.0.1:9" },
    secrets: { TOKEN },
    protected: true,
    allowed_hosts: ["127.0.0.1", "api.example.com"],
    runner_labels: ["gpu", "eu"],
  });
  await make("environments", { name: "plain", variables: { BASE_URL: "http://127.0.0.1:9" } });
  await make("automations", { name: "Flaky", kind: "http", steps: step("/flaky") });
  await make("automations", { name: "Steady", kind: "http", steps: step("/steady") });
  const [flaky, steady] = ["Flaky", "Steady"].map(async (n) => byName(await list("source", "automations"), n).id as string);
  const ids = [await flaky, await steady];
  expect((await s.call("PATCH", `/projects/source/automations/${ids[0]}`, { quarantined: true })).status).toBe(200);
  await make("groups", { name: "ordered", automation_ids: ids, mode: "sequential", stop_on_failure: true });
  await make("groups", { name: "fast", automation_ids: ids });
  const source = await snapshot("source");
  expect(byName(source.environments, "prod")).toMatchObject({ protected: true, runner_labels: ["eu", "gpu"] });

  const from = cliFor("source");
  const into = cliFor("copy");
  try {
    pulled = tempDir("svc-pull-round-");
    const pull = await from.run(["pull", pulled]);
    expect(pull.stderr).toBe("");
    expect(pull.code).toBe(0);
    const file = (path: string) => readFileSync(join(pulled, path), "utf8");
    expect(file("environments/prod.yaml")).toContain("protected: true");
    expect(file("environments/prod.yaml")).toContain("allowed_hosts:");
    expect(file("environments/prod.yaml")).toContain("runner_labels:");
    expect(file("groups/ordered.yaml")).toContain("mode: sequential");
    expect(file("groups/ordered.yaml")).toContain("stop_on_failure: true");
    expect(file("automations/flaky.yaml")).toContain("quarantined: true");
    // Defaults are left out: the pulled files stay minimal.
    for (const f of ["environments/plain.yaml", "groups/fast.yaml", "automations/steady.yaml"])
      expect(file(f)).not.toMatch(/protected|allowed_hosts|runner_labels|mode|stop_on_failure|quarantined/);

    const applied = await into.run(["apply", pulled]);
    expect(applied.stderr).toBe("");
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("6 to create, 0 to update, 0 to delete");
    expect(await snapshot("copy")).toEqual(source);

    // A second apply of the same folder writes nothing.
    const stamps = async () => (await Promise.all(["environments", "groups", "automations"].map((w) => list("copy", w)))).flat().map((r) => r.updated_at);
    const before = await stamps();
    const again = await into.run(["apply", pulled]);
    expect(again.stdout.trim()).toBe("no changes");
    expect(await stamps()).toEqual(before);
  } finally {
    from.remove();
    into.remove();
  }
}, 60_000);

test("--dry-run names a changed protected, mode or quarantined; a member making an environment protected gets 403 and nothing is applied", async () => {
  expect(pulled).not.toBe("");
  const edit = (path: string, from: string | RegExp, to: string) => {
    const full = join(pulled, path);
    const text = readFileSync(full, "utf8");
    expect(text).toMatch(from);
    writeFileSync(full, text.replace(from, to));
  };
  edit("environments/plain.yaml", "name: plain\n", "name: plain\nprotected: true\n");
  edit("groups/fast.yaml", "name: fast\n", "name: fast\nmode: sequential\n");
  edit("automations/steady.yaml", "name: Steady\n", "name: Steady\nquarantined: true\n");
  // Routing changes when the file says so (left out, it is kept: see the last test).
  edit("environments/prod.yaml", /runner_labels:\n( {2}- .*\n)+/, "runner_labels: []\n");
  const before = await snapshot("copy");

  const owner = cliFor("copy");
  const guest = cliFor("copy", member);
  try {
    const plan = await owner.run(["apply", pulled, "--dry-run", "--exit-code"]);
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain("~ update environment environments/plain.yaml (plain): protected\n");
    expect(plan.stdout).toContain("~ update environment environments/prod.yaml (prod): runner_labels\n");
    expect(plan.stdout).toContain("~ update group groups/fast.yaml (fast): mode\n");
    expect(plan.stdout).toContain("~ update automation automations/steady.yaml (Steady): quarantined\n");
    expect(plan.stdout).toContain("plan: 0 to create, 4 to update, 0 to delete");
    expect(await snapshot("copy")).toEqual(before);

    // A member may change neither a protected environment nor an environment's protection, dry run or not; the
    // group and automation changes of the same apply are not written either.
    edit("environments/prod.yaml", "runner_labels: []\n", "runner_labels: [eu, gpu]\n");
    for (const args of [
      ["apply", pulled, "--dry-run"],
      ["apply", pulled],
    ]) {
      const refused = await guest.run(args);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain("only owners and admins can protect an environment or set its allowed_hosts");
    }
    expect(await snapshot("copy")).toEqual(before);
    const res = await s.call(
      "POST",
      "/projects/copy/apply",
      { documents: [{ path: "environments/plain.yaml", text: "type: environment\nname: plain\nallowed_hosts: [api.example.com]\n" }] },
      member,
    );
    expect(res.status).toBe(403);
    const created = await s.call(
      "POST",
      "/projects/copy/apply",
      { documents: [{ path: "environments/new.yaml", text: "type: environment\nname: new\nprotected: true\n" }] },
      member,
    );
    expect(created.status).toBe(403);
    expect(await snapshot("copy")).toEqual(before);

    const done = await owner.run(["apply", pulled]);
    expect(done.code).toBe(0);
    expect(done.stdout).toContain("0 to create, 3 to update, 0 to delete");
    const after = await snapshot("copy");
    expect(byName(after.environments, "plain")).toMatchObject({ protected: true });
    expect(byName(after.groups, "fast")).toMatchObject({ mode: "sequential" });
    expect(byName(after.automations, "Steady")).toMatchObject({ quarantined: true });
    expect((await owner.run(["apply", pulled])).stdout.trim()).toBe("no changes");
  } finally {
    owner.remove();
    guest.remove();
  }
}, 60_000);

test("the new fields are checked as the API checks them, each at its file and line", async () => {
  const documents = [
    { path: "e.yaml", text: "type: environment\nname: e\nallowed_hosts: [https://x.test/]\nrunner_labels: [EU]\n" },
    { path: "g.yaml", text: "type: group\nname: g\nmode: serial\nstop_on_failure: yes please\n" },
    { path: "a.yaml", text: 'name: a\nkind: http\nquarantined: "true"\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n' },
  ];
  const res = await s.call("POST", "/projects/checks/apply", { documents, dry_run: true });
  expect(res.status).toBe(400);
  const body = (await res.json()) as { details: { path: string; message: string }[] };
  expect(body.details).toEqual([
    { path: "e.yaml:3", message: "allowed_hosts.0: a host name like api.example.com or an IP address, without scheme, port or path" },
    { path: "e.yaml:4", message: "runner_labels.0: lowercase letters, digits, '.', '_' and '-', starting with a letter or digit" },
    { path: "g.yaml:3", message: "mode: expected one of parallel, sequential" },
    { path: "g.yaml:4", message: "stop_on_failure: expected boolean, not string" },
    { path: "a.yaml:3", message: "quarantined: expected boolean, not string" },
  ]);
});

test("svc test runs a quarantined automation document as quarantined: its failure does not fail the group run", async () => {
  const text = 'name: q\nkind: http\nquarantined: true\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n';
  const res = await s.call("POST", "/projects/checks/test-runs", { documents: [{ path: "q.yaml", text }] });
  expect(res.status).toBe(202);
  const started = (await res.json()) as { id: string; runs: { quarantined: boolean }[] };
  expect(started.runs.map((r) => r.quarantined)).toEqual([true]);
  type Ended = { status: string; summary: { error: number; failed: number; quarantined: number } };
  let ended: Ended | undefined;
  await waitUntilAsync(async () => {
    ended = (await (await s.call("GET", `/projects/checks/group-runs/${started.id}`)).json()) as Ended;
    return !["queued", "running"].includes(ended.status);
  }, 30_000);
  expect(ended?.summary.quarantined).toBe(1);
  expect(ended?.status).toBe("passed");
}, 40_000);

test("protection and runner routing left out of a document keep what the environment has: an older folder does not unprotect production", async () => {
  expect((await s.call("POST", "/projects", { name: "keep", slug: "keep" })).status).toBe(201);
  const env = await s.call("POST", "/projects/keep/environments", {
    name: "prod",
    variables: { BASE_URL: "https://api.example.com" },
    protected: true,
    allowed_hosts: ["api.example.com"],
    runner_labels: ["eu"],
  });
  expect(env.status).toBe(201);
  const text = "type: environment\nname: prod\nvariables:\n  BASE_URL: https://api.example.com\n";
  const res = await s.call("POST", "/projects/keep/apply", { documents: [{ path: "environments/prod.yaml", text }] });
  expect(res.status).toBe(200);
  const after = (await (await s.call("GET", "/projects/keep/environments/prod")).json()) as Record<string, unknown>;
  expect(after).toMatchObject({ protected: true, allowed_hosts: ["api.example.com"], runner_labels: ["eu"] });
  // Said explicitly, it changes.
  const off = await s.call("POST", "/projects/keep/apply", {
    documents: [{ path: "environments/prod.yaml", text: `${text}protected: false\nrunner_labels: []\n` }],
  });
  expect(off.status).toBe(200);
  expect((await (await s.call("GET", "/projects/keep/environments/prod")).json()) as Record<string, unknown>).toMatchObject({
    protected: false,
    runner_labels: [],
  });
});

test("pull --json tells the files written and their records; files of records gone are left and warned of, a keyed file is written in place", async () => {
  expect((await s.call("POST", "/projects", { name: "stale", slug: "stale" })).status).toBe(201);
  const cli = cliFor("stale");
  try {
    const dir = tempDir("svc-pull-stale-");
    const auto = (name: string) => `name: ${name}\nkind: http\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n`;
    writeFileSync(join(dir, "kept.yaml"), auto("Kept"));
    writeFileSync(join(dir, "custom-place.yaml"), `key: login\n${auto("Log in")}`);
    writeFileSync(join(dir, "gone.yaml"), auto("Gone"));
    writeFileSync(join(dir, "group.yaml"), "type: group\nname: everything\nautomations: [kept.yaml, login]\n");
    expect((await cli.run(["apply", dir])).code).toBe(0);
    // gone.yaml's record is deleted elsewhere; notes.yaml is no svc document.
    const gone = (await list("stale", "automations")).find((a) => a.name === "Gone");
    expect((await s.call("DELETE", `/projects/stale/automations/${gone?.id}`)).status).toBe(204);
    writeFileSync(join(dir, "notes.yaml"), "owner: team-a\n");

    const r = await cli.run(["pull", dir, "--json"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `svc: warning: ${join(dir, "gone.yaml")} was left as it is: no automation of the project has its key "gone.yaml" (delete the file if its record was deleted; else the next svc apply creates it again)\n`,
    );
    const out = JSON.parse(r.stdout) as { dir: string; files: Record<string, unknown>[]; stale: string[] };
    const ids = new Map((await list("stale", "automations")).map((a) => [a.name, a.id]));
    const group = (await list("stale", "groups"))[0];
    expect(out.dir).toBe(dir);
    expect(out.stale).toEqual(["gone.yaml"]);
    expect(out.files.sort((a, b) => String(a.path).localeCompare(String(b.path)))).toEqual([
      { path: "custom-place.yaml", type: "automation", id: ids.get("Log in"), key: "login", name: "Log in" },
      { path: "group.yaml", type: "group", id: group?.id, key: "group.yaml", name: "everything" },
      { path: "kept.yaml", type: "automation", id: ids.get("Kept"), key: "kept.yaml", name: "Kept" },
    ]);
    // Left as they were; the keyed file rewritten where it is (no second file with its key), and the folder applies unchanged.
    expect(readFileSync(join(dir, "gone.yaml"), "utf8")).toBe(auto("Gone"));
    expect(readFileSync(join(dir, "notes.yaml"), "utf8")).toBe("owner: team-a\n");
    expect(readFileSync(join(dir, "custom-place.yaml"), "utf8")).toStartWith("key: login\nname: Log in\n");
    rmSync(join(dir, "gone.yaml"));
    rmSync(join(dir, "notes.yaml"));
    expect((await cli.run(["apply", dir, "--prune", "--dry-run"])).stdout.trim()).toBe("plan: no changes");
  } finally {
    cli.remove();
  }
});
