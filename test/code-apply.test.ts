// Tests as code: `svc apply DIR` makes a project match a folder, `svc pull DIR` writes it back as files.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { writeFolder } from "./helpers/folder";

let s: TestServer;
let cli: SourceCli;

beforeAll(async () => {
  s = await startTestServer();
  for (const slug of ["code", "drift", "bad", "pulled", "moves"]) expect((await s.call("POST", "/projects", { name: slug, slug })).status).toBe(201);
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "code", STAGING_TOKEN: "t0ken-staging" });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
});

const folder = (files: Record<string, string>) => writeFolder(files, tempDir("svc-apply-"));

const automation = (name: string, path = "/health") => `name: ${name}
kind: http
steps:
  - request:
      method: GET
      url: "{{BASE_URL}}${path}"
    expect:
      - status: 200
`;

async function list(project: string, what: string) {
  return ((await (await s.call("GET", `/projects/${project}/${what}?limit=200`)).json()) as { data: Record<string, unknown>[] }).data;
}

test("apply creates, a second apply changes nothing, editing one file updates one record, --prune deletes only applied records", async () => {
  const dir = folder({
    "checks/health.yaml": automation("Health"),
    "checks/home.yml": `key: home-page\n${automation("Home", "/")}`,
    "env.yaml": "type: environment\nname: staging\nvariables:\n  BASE_URL: http://127.0.0.1:9\nsecrets:\n  TOKEN: STAGING_TOKEN\n",
    "smoke.yaml": "type: group\nname: smoke\nautomations: [checks/health.yaml, home-page]\n",
  });
  expect(
    (
      await s.call(
        "POST",
        "/projects/code/automations",
        JSON.parse(JSON.stringify({ name: "Hand made", kind: "http", steps: [{ request: { method: "GET", url: "http://x/" } }] })),
      )
    ).status,
  ).toBe(201);

  const first = await cli.run(["apply", dir]);
  expect(first.code).toBe(0);
  expect(first.stdout).toContain("+ create automation checks/health.yaml (Health)");
  expect(first.stdout).toContain("+ create automation home-page (Home)");
  expect(first.stdout).toContain("+ create environment env.yaml (staging)");
  expect(first.stdout).toContain("+ create group smoke.yaml (smoke)");
  const auts = await list("code", "automations");
  const health = auts.find((a) => a.name === "Health");
  expect(health).toMatchObject({ source: "applied", key: "checks/health.yaml" });
  expect(auts.find((a) => a.name === "Home")).toMatchObject({ source: "applied", key: "home-page" });
  expect((await list("code", "environments"))[0]).toMatchObject({ name: "staging", secret_names: ["TOKEN"], key: "env.yaml" });
  expect((await list("code", "groups"))[0]).toMatchObject({ name: "smoke", automation_ids: [health?.id, auts.find((a) => a.name === "Home")?.id] });

  const again = await cli.run(["apply", dir]);
  expect(again.stdout.trim()).toBe("no changes");
  const after = await list("code", "automations");
  expect(after.map((a) => a.updated_at)).toEqual(auts.map((a) => a.updated_at));
  expect((await cli.run(["apply", dir, "--dry-run", "--exit-code"])).code).toBe(0);

  // Renaming inside the file updates the same record.
  writeFileSync(join(dir, "checks/health.yaml"), automation("Health check"));
  const plan = await cli.run(["apply", dir, "--dry-run", "--exit-code"]);
  expect(plan.code).toBe(1);
  expect(plan.stdout).toContain("~ update automation checks/health.yaml (Health check): name");
  expect((await list("code", "automations")).find((a) => a.id === health?.id)?.name).toBe("Health");
  const edited = await cli.run(["apply", dir]);
  expect(edited.stdout).toContain("0 to create, 1 to update, 0 to delete");
  expect((await list("code", "automations")).find((a) => a.id === health?.id)?.name).toBe("Health check");

  // Without --prune a removed file deletes nothing; with it, only the applied record goes.
  rmSync(join(dir, "checks/home.yml"));
  writeFileSync(join(dir, "smoke.yaml"), "type: group\nname: smoke\nautomations: [checks/health.yaml]\n");
  expect((await cli.run(["apply", dir])).stdout).not.toContain("- delete");
  const pruned = await cli.run(["apply", dir, "--prune"]);
  expect(pruned.stdout).toContain("- delete automation home-page (Home)");
  const names = (await list("code", "automations")).map((a) => a.name).sort();
  expect(names).toEqual(["Hand made", "Health check"]);
}, 60_000);

test("pull writes files that apply takes back unchanged", async () => {
  const dir = folder({
    "a.yaml": automation("Alpha"),
    "nested/b.json": JSON.stringify({
      key: "beta",
      name: "Beta",
      kind: "http",
      tags: ["x"],
      steps: [{ request: { method: "POST", url: "http://127.0.0.1:9/b", json: { a: 1 } } }],
    }),
    "vars.yaml": "type: environment\nname: dev\nvariables:\n  BASE_URL: http://127.0.0.1:9\n",
    "g.yaml": "type: group\nname: all\nautomations: [a.yaml, beta]\n",
  });
  const env = { SVC_PROJECT: "pulled" };
  const pulledCli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, ...env });
  try {
    const applied = await pulledCli.run(["apply", dir]);
    expect(applied.stderr).toBe("");
    await s.call("POST", "/projects/pulled/automations", {
      name: "Manual one",
      kind: "http",
      steps: [{ request: { method: "GET", url: "http://127.0.0.1:9/m" } }],
    });
    const out = tempDir("svc-pull-");
    const pulled = await pulledCli.run(["pull", out]);
    expect(pulled.code).toBe(0);
    expect(readFileSync(join(out, "a.yaml"), "utf8")).toContain("name: Alpha");
    // The manual automation is adopted once (it gets its key), then the round trip is stable.
    const adopt = await pulledCli.run(["apply", out]);
    expect(adopt.stdout).toContain("~ update automation automations/manual-one.yaml (Manual one): source, key");
    const before = await list("pulled", "automations");
    const round = await pulledCli.run(["apply", out, "--prune"]);
    expect(round.stdout.trim()).toBe("no changes");
    expect((await list("pulled", "automations")).map((a) => a.updated_at)).toEqual(before.map((a) => a.updated_at));
    const out2 = tempDir("svc-pull-");
    expect((await pulledCli.run(["pull", out2])).code).toBe(0);
    expect((await pulledCli.run(["apply", out2, "--prune", "--dry-run", "--exit-code"])).code).toBe(0);
  } finally {
    pulledCli.remove();
  }
}, 60_000);

test("validation errors name the file and line, a duplicate name in the folder is refused, and nothing is written", async () => {
  const dir = folder({
    "ok.yaml": automation("Same"),
    "dup.yaml": automation("Same"),
    "bad.yaml": "name: Broken\nkind: http\nsteps:\n  - request:\n      method: FETCH\n      url: http://x/\n",
  });
  const bad = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "bad" });
  try {
    const r = await bad.run(["apply", dir]);
    expect(r.code).toBe(2);
    // Explained as the API explains it, at the bad value's own line.
    expect(r.stderr).toContain("bad.yaml:5: steps.0.request.method: expected one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS");
    expect(r.stderr).toMatch(/(ok|dup)\.yaml:1: name: the automation name "Same" is also used by (ok|dup)\.yaml/);
    expect(await list("bad", "automations")).toEqual([]);
    const res = await s.call("POST", "/projects/bad/apply", { documents: [{ path: "x.yaml", text: "kind: http\nname: [" }] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string; details: { path: string }[] };
    expect(body.error).toBe("invalid_request");
    expect(body.details[0]?.path).toMatch(/^x\.yaml:\d+$/);
  } finally {
    bad.remove();
  }
}, 30_000);

test("a name another record of the project keeps is refused at the file's line, dry run included; a file moved with --prune keeps its name", async () => {
  const moves = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "moves" });
  try {
    expect(
      (await s.call("POST", "/projects/moves/automations", { name: "Made by hand", kind: "http", steps: [{ request: { url: "http://x/" } }] })).status,
    ).toBe(201);
    expect((await s.call("POST", "/projects/moves/groups", { name: "nightly", automation_ids: [] })).status).toBe(201);
    const clash = folder({ "checks/hand.yaml": automation("Made by hand") });
    for (const args of [
      ["apply", clash],
      ["apply", clash, "--dry-run"],
    ]) {
      const r = await moves.run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('checks/hand.yaml:1: name: an automation named "Made by hand" exists (aut_');
      expect(r.stderr).toContain('made outside the folder): rename one of them, or adopt it with "id: aut_');
    }
    expect((await list("moves", "automations")).map((a) => a.name)).toEqual(["Made by hand"]);

    // Applied from one path, then the file moves: without --prune the old record keeps the name; with it, the move is one delete and one create.
    const dir = folder({ "old/path.yaml": automation("Moving") });
    expect((await moves.run(["apply", dir])).code).toBe(0);
    rmSync(join(dir, "old"), { recursive: true });
    writeFileSync(join(dir, "new-path.yaml"), automation("Moving"));
    const kept = await moves.run(["apply", dir]);
    expect(kept.code).toBe(2);
    expect(kept.stderr).toContain('new-path.yaml:1: name: an automation named "Moving" exists (aut_');
    expect(kept.stderr).toContain('applied from "old/path.yaml", which the folder no longer has (apply with --prune to delete it)');
    const moved = await moves.run(["apply", dir, "--prune"]);
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain("- delete automation old/path.yaml (Moving)");
    expect(moved.stdout).toContain("+ create automation new-path.yaml (Moving)");
    expect((await list("moves", "automations")).map((a) => [a.name, a.key]).sort()).toEqual([
      ["Made by hand", null],
      ["Moving", "new-path.yaml"],
    ]);

    // A group: an applied group may not take the name of one made by hand... unless that one is adopted (it has no key).
    const groups = folder({ "a.yaml": automation("Alpha"), "g.yaml": "type: group\nname: nightly\nautomations: [a.yaml]\n" });
    const adopted = await moves.run(["apply", groups, "--prune"]);
    expect(adopted.code).toBe(0);
    expect(adopted.stdout).toContain("~ update group g.yaml (nightly)");
    rmSync(join(groups, "g.yaml"));
    writeFileSync(join(groups, "h.yaml"), "type: group\nname: nightly\nautomations: [a.yaml]\n");
    const regroup = await moves.run(["apply", groups]);
    expect(regroup.code).toBe(2);
    expect(regroup.stderr).toContain('h.yaml:2: name: a group named "nightly" exists (grp_');
    expect((await list("moves", "groups")).map((g) => [g.name, g.key])).toEqual([["nightly", "g.yaml"]]);
  } finally {
    moves.remove();
  }
}, 60_000);

test("the apply operation honours Idempotency-Key: a retry answers the first plan and writes once", async () => {
  const documents = [{ path: "i.yaml", text: automation("Once") }];
  const headers = { "Idempotency-Key": "apply-1" };
  const a = await s.call("POST", "/projects/drift/apply", { documents }, undefined, headers);
  const b = await s.call("POST", "/projects/drift/apply", { documents }, undefined, headers);
  expect(a.status).toBe(200);
  expect(b.headers.get("Idempotent-Replayed")).toBe("true");
  expect(await b.json()).toEqual(await a.json());
  expect((await list("drift", "automations")).length).toBe(1);
});

test("documents a parser would choke on are refused as 400s at their line: too deep, an alias bomb, too large", async () => {
  const apply = (documents: { path: string; text: string }[]) => s.call("POST", "/projects/bad/apply", { documents, dry_run: true });
  const deep = await apply([{ path: "deep.yaml", text: `name: x\nsteps: ${"[".repeat(100_000)}${"]".repeat(100_000)}\n` }]);
  expect(deep.status).toBe(400);
  expect(((await deep.json()) as { details: unknown[] }).details).toEqual([
    { path: "deep.yaml:2", message: "nested deeper than 64 levels: a document this deep is not a test" },
  ]);
  const levels = Array.from(
    { length: 10 },
    (_, i) =>
      `a${i}: &a${i} [${Array(10)
        .fill(i === 0 ? "lol" : `*a${i - 1}`)
        .join(", ")}]`,
  );
  const bomb = await apply([{ path: "bomb.yaml", text: `${levels.join("\n")}\nname: *a9\n` }]);
  expect(bomb.status).toBe(400);
  const bombed = (await bomb.json()) as { details: { path: string; message: string }[] };
  expect(bombed.details[0]?.path).toBe("bomb.yaml:1");
  expect(bombed.details[0]?.message).toContain("cannot be read");
  const large = await apply([{ path: "large.yaml", text: `name: x\ndescription: ${"y".repeat(300 * 1024)}\n` }]);
  expect(large.status).toBe(400);
  expect(((await large.json()) as { details: { path: string }[] }).details[0]?.path).toBe("body.documents.0.text");
  expect(await list("bad", "automations")).toEqual([]);
});

test("the API answers while a large folder is parsed: documents are read off the API's thread", async () => {
  // Three documents of a quarter MiB each (a long YAML list): most of a second of parsing in all.
  const text = Array.from({ length: 32_000 }, (_, i) => `- ${i}`).join("\n");
  const documents = Array.from({ length: 3 }, (_, i) => ({ path: `list-${i}.yaml`, text }));
  const order: string[] = [];
  const applying = s.call("POST", "/projects/bad/apply", { documents, dry_run: true }).then(async (r) => {
    order.push(`apply ${r.status}`);
    return r;
  });
  await Bun.sleep(50);
  const health = await fetch(`${s.url}/healthz`);
  order.push(`healthz ${health.status}`);
  await applying;
  expect(order).toEqual(["healthz 200", "apply 400"]);
});

test("every problem of a folder is told at once: four documents wrong in four ways, one refusal naming each at its line", async () => {
  const documents = [
    { path: "e1.yaml", text: "type: environment\nname: e\nsecrets:\n  A: VAR_A\n" },
    { path: "e2.yaml", text: "type: environment\nname: e2\nsecrets:\n  B: VAR_B\n" },
    { path: "a.yaml", text: 'name: a\nkind: http\nenvironment: nothere\nsteps:\n  - request: { url: "http://127.0.0.1:9/health" }\n' },
    { path: "g.yaml", text: "type: group\nname: g\nautomations: [missing.yaml]\n" },
    { path: "s.yaml", text: "type: schedule\nname: s\ntarget: { group: nowhere }\ninterval_seconds: 600\n" },
  ];
  const res = await s.call("POST", "/projects/bad/apply", { documents, dry_run: true });
  expect(res.status).toBe(400);
  const body = (await res.json()) as { message: string; details: { path: string; message: string }[] };
  expect(body.message).toBe("5 problems in the documents");
  expect(body.details).toEqual([
    { path: "e1.yaml:4", message: "secrets.A: the environment variable VAR_A is not set" },
    { path: "e2.yaml:4", message: "secrets.B: the environment variable VAR_B is not set" },
    { path: "a.yaml:3", message: 'environment: environment "nothere" does not exist in this project or the folder' },
    { path: "g.yaml:3", message: 'automations.0: no automation has the key "missing.yaml"' },
    { path: "s.yaml:3", message: 'target.group: no group has the key or the exact name "nowhere"' },
  ]);
});

test("a group naming an automation by its file's name without the extension, or by its name, is told the key it means", async () => {
  expect((await s.call("POST", "/projects", { name: "keys", slug: "keys" })).status).toBe(201);
  const documents = [
    { path: "checks/health.yaml", text: "name: Health check\nkind: http\nsteps:\n  - request: { url: https://x.test/h }\n" },
    { path: "smoke.yaml", text: "type: group\nname: smoke\nautomations: [health, Health check, nothing]\n" },
  ];
  const res = await s.call("POST", "/projects/keys/apply", { documents, dry_run: true });
  expect(res.status).toBe(400);
  const hint = '(did you mean "checks/health.yaml"? A document\'s key is its path in the folder, unless it has a key: field)';
  expect(((await res.json()) as { details: { path: string; message: string }[] }).details).toEqual([
    { path: "smoke.yaml:3", message: `automations.0: no automation has the key "health" ${hint}` },
    { path: "smoke.yaml:3", message: `automations.1: no automation has the key "Health check" ${hint}` },
    { path: "smoke.yaml:3", message: 'automations.2: no automation has the key "nothing"' },
  ]);
});

test("the reader takes workspaces in turns: one workspace's large folders do not hold another's apply behind them", async () => {
  const other = await s.userWithKey("owner@turns.test", "turns");
  expect((await s.call("POST", "/projects", { name: "turns", slug: "turns" }, other.key)).status).toBe(201);
  // Four folders of one workspace, each most of a second to read, sent at once; then one small folder of another.
  const text = Array.from({ length: 32_000 }, (_, i) => `- ${i}`).join("\n");
  const heavy = { documents: Array.from({ length: 3 }, (_, i) => ({ path: `list-${i}.yaml`, text })), dry_run: true };
  const done: string[] = [];
  const heavies = Array.from({ length: 4 }, (_, i) =>
    s.call("POST", "/projects/bad/apply", heavy).then((r) => {
      done.push(`heavy ${i} ${r.status}`);
    }),
  );
  await Bun.sleep(100);
  const small = { documents: [{ path: "a.yaml", text: automation("Small") }], dry_run: true };
  const light = s.call("POST", "/projects/turns/apply", small, other.key).then((r) => {
    done.push(`light ${r.status}`);
  });
  await Promise.all([...heavies, light]);
  // Read in the other workspace's first turn: after the folder being read when it came, not
  // after all four.
  expect(done.indexOf("light 200")).toBeLessThanOrEqual(1);
  expect(done).toHaveLength(5);
}, 60_000);

test("a YAML syntax error is told at its own line, and an unknown key whose value is a block at the key's line", async () => {
  const documents = [
    { path: "syntax.yaml", text: 'name: s\nkind: http\nsteps:\n  - request: { url: "http://127.0.0.1:9/"\n    expect: []\n' },
    { path: "twice.yaml", text: "name: t\nkind: http\nname: t2\nsteps: []\n" },
    { path: "unknown.yaml", text: 'name: u\nkind: http\nextra:\n  a: 1\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n' },
  ];
  const res = await s.call("POST", "/projects/bad/apply", { documents, dry_run: true });
  expect(res.status).toBe(400);
  const details = ((await res.json()) as { details: { path: string; message: string }[] }).details;
  expect(details.map((d) => d.path)).toEqual(["syntax.yaml:5", "twice.yaml:3", "unknown.yaml:3"]);
  expect(details[1]?.message).toBe("Map keys must be unique");
  expect(details[2]?.message).toStartWith('unknown field "extra"');
});

test("documents that do not read do not hide the others' problems: a missing member and a duplicate name are told with them", async () => {
  const ok = (name: string) => `name: ${name}\nkind: http\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n`;
  const documents = [
    { path: "broken.yaml", text: 'name: Broken\nkind: http\nsteps:\n  - request: { url: "http://127.0.0.1:9/"\n    expect: []\n' },
    { path: "invalid.yaml", text: "name: Invalid\nkind: http\nsteps: nope\n" },
    { path: "one.yaml", text: ok("Twin") },
    { path: "two.yaml", text: ok("Twin") },
    { path: "g.yaml", text: "type: group\nname: g\nautomations: [broken.yaml, invalid.yaml, one.yaml, missing.yaml]\n" },
    { path: "three.yaml", text: ok("Made here") },
  ];
  const steps = [{ request: { method: "GET", url: "http://127.0.0.1:9/" } }];
  const made = await s.call("POST", "/projects/bad/automations", { name: "Made here", kind: "http", steps });
  expect(made.status).toBe(201);
  const res = await s.call("POST", "/projects/bad/apply", { documents, dry_run: true });
  expect(res.status).toBe(400);
  const body = (await res.json()) as { message: string; details: { path: string; message: string }[] };
  expect(body.details.map((d) => d.path)).toEqual(["broken.yaml:5", "invalid.yaml:3", "two.yaml:1", "three.yaml:1", "g.yaml:3"]);
  expect(body.details[2]?.message).toBe('name: the automation name "Twin" is also used by one.yaml');
  expect(body.details[3]?.message).toStartWith('name: an automation named "Made here" exists (aut_');
  expect(body.details[4]?.message).toBe('automations.3: no automation has the key "missing.yaml"');
  expect(body.message).toBe("5 problems in the documents");
  expect((await list("bad", "automations")).map((a) => (a as { name: string }).name)).toEqual(["Made here"]);
});
