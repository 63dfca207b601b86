// Tests as code: a record's identity across applies. Giving an applied file a `key:` keeps its record (same id,
// history, health) for every kind of document; from then on the key is its identity.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";
import { writeFolder } from "./helpers/folder";

// Each test spawns the CLI several times (and on PostgreSQL the first server makes a cluster).
setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;

beforeAll(async () => {
  s = await startTestServer();
  for (const slug of ["keyed", "taken"]) expect((await s.call("POST", "/projects", { name: slug, slug })).status).toBe(201);
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "keyed", HOOK_SECRET: "hook-secret-value" });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
});

const write = (dir: string, files: Record<string, string>) => writeFolder(files, dir);

async function list(project: string, what: string) {
  return ((await (await s.call("GET", `/projects/${project}/${what}?limit=200`)).json()) as { data: Record<string, unknown>[] }).data;
}

/** Every record of the project by kind: [name, id, key], sorted. */
async function records(project: string) {
  const out: Record<string, unknown[][]> = {};
  for (const what of ["automations", "groups", "environments", "schedules", "alert-channels"])
    out[what] = (await list(project, what)).map((r) => [r.name, r.id, r.key]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return out;
}

const login = (key = "") =>
  `${key}name: Log in\nkind: http\nenvironment: staging\nsteps:\n  - request: { method: GET, url: "{{BASE_URL}}/login" }\n    expect: [{ status: 200 }]\n`;

test("giving an applied file a key: keeps its record (same id) for automations, groups, environments, schedules and alert channels; --prune deletes nothing", async () => {
  const dir = write(tempDir("svc-apply-key-"), {
    "checks/login.yaml": login(),
    "env.yaml": "type: environment\nname: staging\nvariables:\n  BASE_URL: http://127.0.0.1:9\n",
    "groups/smoke.yaml": "type: group\nname: smoke\nautomations: [checks/login.yaml]\n",
    "schedules/nightly.yaml": "type: schedule\nname: nightly\ntarget: { group: groups/smoke.yaml }\ninterval_seconds: 3600\n",
    "alerts/hook.yaml": "type: alert_channel\nname: hook\nkind: webhook\nurl: https://hooks.example.com/svc\nsecret_from: HOOK_SECRET\nevents: [recovered]\n",
  });
  expect((await cli.run(["apply", dir])).code).toBe(0);
  const before = await records("keyed");
  const automationId = before.automations?.[0]?.[1];
  // The automation's own state outside the file: a run of it (its last run) must survive the key.
  const run = (await (await s.call("POST", `/projects/keyed/automations/${automationId}/run`, {})).json()) as { id: string };
  expect(await waitUntilAsync(async () => (await list("keyed", "automations"))[0]?.last_run !== null, 20_000)).toBe(true);

  // Each file gets a key; a reference by the old path names nothing any more, and says the new key.
  write(dir, {
    "checks/login.yaml": login("key: login\n"),
    "env.yaml": "type: environment\nkey: staging\nname: staging\nvariables:\n  BASE_URL: http://127.0.0.1:9\n",
    "groups/smoke.yaml": "type: group\nkey: smoke\nname: smoke\nautomations: [checks/login.yaml]\n",
    "schedules/nightly.yaml": "type: schedule\nkey: nightly\nname: nightly\ntarget: { group: groups/smoke.yaml }\ninterval_seconds: 3600\n",
    "alerts/hook.yaml":
      "type: alert_channel\nkey: hook\nname: hook\nkind: webhook\nurl: https://hooks.example.com/svc\nsecret_from: HOOK_SECRET\nevents: [recovered]\n",
  });
  const stale = await cli.run(["apply", dir, "--dry-run", "--prune"]);
  expect(stale.code).toBe(2);
  expect(stale.stderr).toContain(
    'groups/smoke.yaml:4: automations.0: no automation has the key "checks/login.yaml" (the file checks/login.yaml has the key "login": name it by its key)',
  );
  expect(stale.stderr).toContain(
    'schedules/nightly.yaml:4: target.group: no group has the key or the exact name "groups/smoke.yaml" (the file groups/smoke.yaml has the key "smoke": name it by its key)',
  );

  write(dir, {
    "groups/smoke.yaml": "type: group\nkey: smoke\nname: smoke\nautomations: [login]\n",
    "schedules/nightly.yaml": "type: schedule\nkey: nightly\nname: nightly\ntarget: { group: smoke }\ninterval_seconds: 3600\n",
  });
  const plan = await cli.run(["apply", dir, "--dry-run", "--prune"]);
  expect(plan.stderr).toBe("");
  expect(plan.code).toBe(0);
  expect(plan.stdout.split("\n").filter((l) => l !== "")).toEqual([
    "~ update environment staging (staging): key",
    "~ update automation login (Log in): key",
    "~ update group smoke (smoke): key",
    "~ update schedule nightly (nightly): key",
    "~ update alert_channel hook (hook): key",
    "plan: 0 to create, 5 to update, 0 to delete",
  ]);
  expect((await cli.run(["apply", dir, "--prune"])).code).toBe(0);

  // The same records, now with the keys; the automation keeps its last run; the next apply changes nothing.
  const after = await records("keyed");
  const withKeys = (r: typeof before, keys: Record<string, string>) =>
    Object.fromEntries(Object.entries(r).map(([what, rows]) => [what, rows.map(([name, id]) => [name, id, keys[what]])]));
  expect(after).toEqual(withKeys(before, { automations: "login", groups: "smoke", environments: "staging", schedules: "nightly", "alert-channels": "hook" }));
  const automation = (await list("keyed", "automations"))[0] as { last_run: { id: string } | null };
  expect(automation.last_run?.id).toBe(run.id);
  expect((await cli.run(["apply", dir, "--prune"])).stdout.trim()).toBe("no changes");

  // The file may now move freely: the key keeps the record.
  rmSync(join(dir, "checks"), { recursive: true });
  write(dir, { "moved/anywhere.yaml": login("key: login\n") });
  expect((await cli.run(["apply", dir, "--prune"])).stdout.trim()).toBe("no changes");
  expect((await records("keyed")).automations).toEqual(after.automations);
});

test("a file's old path that another document has for its key stays that document's record; a new key at a new path is a new record", async () => {
  const taken = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "taken" });
  try {
    const dir = write(tempDir("svc-apply-key-"), { "a.yaml": "name: A\nkind: http\nsteps:\n  - request: { url: http://127.0.0.1:9/a }\n" });
    expect((await taken.run(["apply", dir])).code).toBe(0);
    const [a] = await list("taken", "automations");
    // a.yaml gets a key, and another file claims the key "a.yaml": that one is the record.
    write(dir, {
      "a.yaml": "key: alpha\nname: A2\nkind: http\nsteps:\n  - request: { url: http://127.0.0.1:9/a }\n",
      "b.yaml": "key: a.yaml\nname: A\nkind: http\nsteps:\n  - request: { url: http://127.0.0.1:9/a }\n",
      "c.yaml": "key: gamma\nname: C\nkind: http\nsteps:\n  - request: { url: http://127.0.0.1:9/c }\n",
    });
    const r = await taken.run(["apply", dir, "--prune"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("+ create automation alpha (A2)");
    expect(r.stdout).toContain("+ create automation gamma (C)");
    expect(r.stdout).toContain("2 to create, 0 to update, 0 to delete");
    expect(r.stdout).not.toContain("- delete");
    expect((await list("taken", "automations")).find((x) => x.key === "a.yaml")?.id).toBe(a?.id);
  } finally {
    taken.remove();
  }
});
