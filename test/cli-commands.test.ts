// Every manifest operation has a CLI command, and each one works through the compiled binary against a real server.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { operations } from "../src/manifest/index";
import { type CliSandbox, cliSandbox } from "./helpers/cli";
import { type ScriptedModel, startScriptedModel } from "./helpers/scripted-model";
import { startTestServer, type TestServer } from "./helpers/server";

// Each test spawns the compiled binary several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: CliSandbox;
/** The assistant's model: a scripted chat-completions server. */
let model: ScriptedModel;
const covered = new Set<string>();

beforeAll(async () => {
  model = startScriptedModel();
  s = await startTestServer({}, { SVC_ASSISTANT_BASE_URL: model.baseUrl, SVC_ASSISTANT_MODEL: "scripted" });
  cli = cliSandbox({ SVC_SERVER: s.url, SVC_API_KEY: s.key });
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await model.stop();
});

type Rec = Record<string, unknown> & { id: string };

/** Runs a command for an operation with --json, records the operation as covered, and returns the parsed JSON. */
async function op<T = Rec>(name: string, args: string[]): Promise<T> {
  covered.add(name);
  return cli.json<T>(args);
}

/** Runs a command whose answer has no JSON (204, raw bodies); returns stdout. */
async function plain(name: string, args: string[]): Promise<string> {
  covered.add(name);
  const r = await cli.run(args);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  return r.stdout;
}

/** A start/cancel race with the engines is not this test's business: cancelling may find the work already over. */
async function cancelOrFinished(name: string, args: string[]): Promise<void> {
  covered.add(name);
  const r = await cli.run([...args, "--json"]);
  if (r.code === 0) expect(JSON.parse(r.stdout).status).toBe("cancelled");
  else {
    // A 409 conflict is a usage error (exit 2): exit 1 is only for a watched run or generation that did not pass.
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("conflict");
  }
}

test("every operation's command works end to end, and every operation has one", async () => {
  const P = ["--project", "shop"];
  expect((await op("whoami", ["whoami"])).user).toMatchObject({ email: "owner@acme.test" });

  // projects
  const project = await op("create_project", ["projects", "create", "Shop", "--description", "the shop"]);
  expect(project).toMatchObject({ slug: "shop", name: "Shop", description: "the shop" });
  const spare = await op("create_project", ["projects", "create", "Spare"]);
  expect((await op<{ data: Rec[] }>("list_projects", ["projects", "list"])).data.map((p) => p.slug)).toEqual(expect.arrayContaining(["shop", "spare"]));
  expect((await op("get_project", ["projects", "show", "shop"])).id).toBe(project.id);
  await Bun.write(
    `${cli.cwd}/openapi.yaml`,
    'openapi: 3.0.3\ninfo: { title: shop, version: "1" }\npaths:\n  /items:\n    get:\n      responses: { "200": { description: ok } }\n',
  );
  expect(await op("update_project", ["projects", "update", "shop", "--description", "changed", "--openapi", "@openapi.yaml"])).toMatchObject({
    description: "changed",
    has_openapi: true,
  });
  expect(await plain("delete_project", ["projects", "delete", spare.id])).toContain("deleted project");

  // environments (a secret is write-only: only its name comes back)
  const env = await op("create_environment", [
    "environments",
    "create",
    "ci",
    ...P,
    "--variables",
    "BASE_URL=http://127.0.0.1:9",
    "--secrets",
    "TOKEN=s3cret-token",
  ]);
  expect(env).toMatchObject({ name: "ci", variables: { BASE_URL: "http://127.0.0.1:9" }, secret_names: ["TOKEN"] });
  expect(JSON.stringify(env)).not.toContain("s3cret-token");
  expect((await op<{ data: Rec[] }>("list_environments", ["environments", "list", ...P])).data).toHaveLength(1);
  // The table says where an environment's runs go and which secrets it holds (by name).
  const envTable = await plain("list_environments", ["environments", "list", ...P]);
  expect(envTable.split("\n")[0]).toMatch(/^ID +NAME +PROTECTED +RUNNER LABELS +SECRET NAMES +KEY *$/);
  expect(envTable).toContain("TOKEN");
  expect((await op("get_environment", ["environments", "show", "ci", ...P])).id).toBe(env.id);
  expect((await op("update_environment", ["environments", "update", env.id, ...P, "--variables", "BASE_URL=http://127.0.0.1:8"])).variables).toEqual({
    BASE_URL: "http://127.0.0.1:8",
  });

  // features and generation
  const feature = await op("create_feature", ["features", "create", "Login", ...P, "--acceptance-criteria", "Scenario: x\n  Given the user is signed in"]);
  expect(feature.id).toStartWith("fea_");
  expect((await op<{ data: Rec[] }>("list_features", ["features", "list", ...P])).data.map((f) => f.id)).toEqual([feature.id]);
  expect((await op("get_feature", ["features", "show", feature.id, ...P])).name).toBe("Login");
  expect((await op("update_feature", ["features", "update", feature.id, ...P, "--target", '{"kind":"web","url":"http://127.0.0.1:9/login"}'])).target).toEqual({
    kind: "web",
    url: "http://127.0.0.1:9/login",
  });
  const generation = await op("start_generation", ["generate", feature.id, ...P, "--strategy", "gherkin"]);
  expect(generation).toMatchObject({ feature_id: feature.id, strategy: "gherkin" });
  expect((await op("get_generation", ["generation", "show", feature.id, ...P])).id).toBe(generation.id);
  await cancelOrFinished("cancel_generation", ["generation", "cancel", feature.id, ...P]);

  // automations, from a YAML file plus flags
  await Bun.write(
    `${cli.cwd}/aut.yaml`,
    'name: item exists\nkind: http\nsteps:\n  - request: { url: /items/1 }\n    expect: [ { status: 200 }, "[BODY].id == 1" ]\n',
  );
  const aut = await op("create_automation", ["automations", "create", ...P, "--file", "aut.yaml", "--tags", "smoke,api"]);
  expect(aut).toMatchObject({ name: "item exists", kind: "http", tags: ["smoke", "api"], status: "active" });
  // The condition shorthand in a YAML file is stored in the object form.
  expect((aut.steps as { expect: unknown[] }[])[0]?.expect).toEqual([{ status: 200 }, { json: "$.id", equals: 1 }]);
  expect((await op<{ data: Rec[] }>("list_automations", ["automations", "list", ...P, "--q", "item"])).data.map((a) => a.id)).toEqual([aut.id]);
  expect((await op("get_automation", ["automations", "show", aut.id, ...P])).steps).toHaveLength(1);
  expect(await op("update_automation", ["automations", "update", aut.id, ...P, "--description", "checks item 1", "--retries", "1"])).toMatchObject({
    description: "checks item 1",
    retries: 1,
  });
  const run = await op("run_automation", ["automations", "run", aut.id, ...P, "--env", "ci"]);
  expect(run).toMatchObject({ automation_id: aut.id, environment_id: env.id, trigger: "cli" });
  expect((await op<{ data: Rec[] }>("list_automation_runs", ["automations", "runs", aut.id, ...P])).data.map((r) => r.id)).toContain(run.id);

  // runs
  expect((await op<{ data: Rec[] }>("list_runs", ["runs", "list", ...P, "--automation", aut.id])).data.map((r) => r.id)).toContain(run.id);
  expect((await op("get_run", ["runs", "show", run.id, ...P])).id).toBe(run.id);
  await cancelOrFinished("cancel_run", ["runs", "cancel", run.id, ...P]);
  expect(await plain("get_run_junit", ["runs", "junit", run.id, ...P])).toContain("<testsuite");
  covered.add("get_run_artifact");
  const artifact = await cli.run(["runs", "artifact", run.id, "nothing.png", ...P]);
  expect({ code: artifact.code, err: artifact.stderr }).toEqual({ code: 4, err: expect.stringContaining("not_found") });

  // groups and group runs
  const group = await op("create_group", ["groups", "create", "nightly", ...P, "--automation-ids", aut.id]);
  expect(group.automation_ids).toEqual([aut.id]);
  expect((await op<{ data: Rec[] }>("list_groups", ["groups", "list", ...P])).data).toHaveLength(1);
  expect((await op("get_group", ["groups", "show", group.id, ...P])).name).toBe("nightly");
  expect((await op("update_group", ["groups", "update", group.id, ...P, "--description", "every night"])).description).toBe("every night");
  const groupRun = await op("run_group", ["groups", "run", group.id, ...P, "--env", "ci"]);
  expect(groupRun.id).toStartWith("grn_");
  expect((await op<{ data: Rec[] }>("list_group_runs", ["group-runs", "list", ...P])).data.map((g) => g.id)).toEqual([groupRun.id]);
  expect((await op("get_group_run", ["group-runs", "show", groupRun.id, ...P])).group_name).toBe("nightly");
  expect(await plain("get_group_run_junit", ["group-runs", "junit", groupRun.id, ...P])).toContain("<testsuite");
  await cancelOrFinished("cancel_group_run", ["group-runs", "cancel", groupRun.id, ...P]);
  // schedules and alert channels (before the group they target is deleted)
  const sch = await op("create_schedule", ["schedules", "create", "nightly run", ...P, "--target", `{"group":"${group.id}"}`, "--cron", "0 3 * * *"]);
  expect(sch).toMatchObject({ cron: "0 3 * * *", timezone: "UTC", target: { group: group.id } });
  expect((await op<{ data: Rec[] }>("list_schedules", ["schedules", "list", ...P])).data.map((x) => x.id)).toEqual([sch.id]);
  expect((await op("get_schedule", ["schedules", "show", "nightly run", ...P])).id).toBe(sch.id);
  expect((await op("update_schedule", ["schedules", "update", sch.id, ...P, "--every", "600"])).interval_seconds).toBe(600);
  expect(await plain("delete_schedule", ["schedules", "delete", sch.id, ...P])).toContain("deleted schedule");
  const ch = await op("create_alert_channel", ["alert-channels", "create", "chat", ...P, "--kind", "slack", "--url", "http://127.0.0.1:9/slack"]);
  expect(ch).toMatchObject({ kind: "slack", has_secret: false });
  expect((await op<{ data: Rec[] }>("list_alert_channels", ["alert-channels", "list", ...P])).data.map((x) => x.id)).toEqual([ch.id]);
  expect((await op("get_alert_channel", ["alert-channels", "show", "chat", ...P])).id).toBe(ch.id);
  expect((await op("update_alert_channel", ["alert-channels", "update", ch.id, ...P, "--events", '["failing"]'])).events).toEqual(["failing"]);
  // Lists of words and addresses are written as on any command line: comma-separated (or repeated).
  expect((await op("update_alert_channel", ["alert-channels", "update", ch.id, ...P, "--events", "failing,recovered"])).events).toEqual([
    "failing",
    "recovered",
  ]);
  const sent = await op<{ delivery_id: string }>("test_alert_channel", ["alert-channels", "test", ch.id, ...P]);
  expect((await op<{ data: { delivery_id: string }[] }>("list_alert_deliveries", ["alert-channels", "deliveries", ch.id, ...P])).data[0]?.delivery_id).toBe(
    sent.delivery_id,
  );
  expect(await plain("delete_alert_channel", ["alert-channels", "delete", ch.id, ...P])).toContain("deleted alert channel");
  // the assistant: a question whose write is held, then confirmed; the conversation listed and read
  model.script({ tools: [{ name: "create_feature", arguments: { project: "shop", name: "asked for" } }] }, { text: "Confirm it, please." });
  const asked = await op<{ conversation_id: string; actions: { id: string; status: string }[] }>("send_assistant_message", [
    "assistant",
    "ask",
    "Add a feature called asked for",
  ]);
  expect(asked.actions.map((a) => a.status)).toEqual(["needs_confirmation"]);
  expect((await op<{ status: string }>("confirm_assistant_action", ["assistant", "confirm", asked.actions[0]?.id ?? ""])).status).toBe("done");
  expect((await op<{ data: Rec[] }>("list_assistant_conversations", ["assistant", "list"])).data.map((c) => c.id)).toContain(asked.conversation_id);
  expect((await op("get_assistant_conversation", ["assistant", "show", asked.conversation_id])).id).toBe(asked.conversation_id);
  // runners: a token shown once, listed, read and revoked
  const runner = await op<{ id: string; token: string }>("create_runner", ["runners", "create", "office-box", "--labels", "eu,fast"]);
  expect(runner.token).toMatch(/^svcr_/);
  expect((await op<{ data: Rec[] }>("list_runners", ["runners", "list"])).data.map((r) => r.id)).toContain(runner.id);
  // As a table: whether each can take runs now, which, and how many it holds (a runner that never said hello: not connected).
  const listed = (await plain("list_runners", ["runners", "list"])).split("\n");
  expect(listed[0]?.split(/\s{2,}/)).toEqual(["ID", "NAME", "LABELS", "SCOPE", "VERSION", "BROWSER", "CONNECTED", "RUNNING", "LAST SEEN AT", "REVOKED AT"]);
  expect(listed.find((l) => l.startsWith(runner.id))?.split(/\s{2,}/)).toEqual([
    runner.id,
    "office-box",
    "eu, fast",
    "workspace",
    "-",
    "-",
    "false",
    "0",
    "-",
    "-",
  ]);
  expect((await op("get_runner", ["runners", "show", runner.id])).labels).toEqual(["eu", "fast"]);
  await plain("revoke_runner", ["runners", "revoke", runner.id]);
  // tests as code: a folder applied, then a cURL command imported
  await Bun.write(`${cli.cwd}/suite/items.yaml`, "name: items from a folder\nkind: http\nsteps:\n  - request: { url: /items }\n");
  expect((await op<{ changes: { op: string }[] }>("apply", ["apply", "suite", ...P])).changes.map((c) => c.op)).toEqual(["create"]);
  expect((await op<{ changes: unknown[] }>("apply", ["apply", "suite", ...P])).changes).toEqual([]);
  // svc test runs the folder without saving it; its run cannot reach a target here, so it exits 1 with the group run.
  covered.add("test_documents");
  const tried = await cli.run(["test", "suite", ...P, "--json"]);
  expect(tried.code).toBe(1);
  expect(JSON.parse(tried.stdout)).toMatchObject({ trigger: "test", group_name: "test suite", status: expect.stringMatching(/^(failed|error)$/) });
  const imported = await op<{ automations: Rec[] }>("import_curl", ["import", "curl", "curl https://shop.example.test/items/1", ...P]);
  expect(imported.automations).toHaveLength(1);
  await Bun.write(
    `${cli.cwd}/collection.json`,
    JSON.stringify({ info: { name: "cli collection" }, item: [{ name: "list items", request: { method: "GET", url: "https://shop.example.test/items" } }] }),
  );
  expect((await op<{ automations: Rec[] }>("import_postman", ["import", "postman", "collection.json", ...P])).automations).toHaveLength(1);
  await Bun.write(
    `${cli.cwd}/capture.har`,
    JSON.stringify({ log: { entries: [{ request: { method: "GET", url: "https://shop.example.test/items" }, response: { status: 200 } }] } }),
  );
  expect((await op<{ automations: Rec[] }>("import_har", ["import", "har", "capture.har", ...P, "--name", "from a capture"])).automations).toHaveLength(1);
  await Bun.write(
    `${cli.cwd}/api.yaml`,
    'openapi: 3.0.3\ninfo: { title: cli api, version: "1" }\nservers: [{ url: "https://shop.example.test" }]\npaths:\n  /items:\n    get:\n      responses: { "200": { description: ok } }\n',
  );
  expect((await op<{ automations: Rec[] }>("import_openapi", ["import", "openapi", "api.yaml", ...P])).automations.length).toBeGreaterThan(0);
  expect(await plain("export_hurl", ["export", "hurl", String(imported.automations[0]?.id), ...P])).toContain("GET https://shop.example.test/items/1");
  // --out is --output under the name exporters are often given.
  await plain("export_playwright", ["export", "playwright", String(imported.automations[0]?.id), ...P, "--out", "exported.spec.ts"]);
  expect(await Bun.file(`${cli.cwd}/exported.spec.ts`).text()).toContain('await request.fetch("https://shop.example.test/items/1"');
  const selected = await op<{ runs: Rec[] }>("run_selection", ["run", "--automation", aut.id, ...P, "--env", "ci", "--no-ci-metadata"]);
  expect(selected.runs).toHaveLength(1);
  expect(await plain("delete_group", ["groups", "delete", group.id, ...P])).toContain("deleted group");

  // a feature's automations at once, the feature named (its generation above may have added drafts of its own)
  const draft = await op("create_automation", [
    "automations",
    "create",
    ...P,
    "--name",
    "draft item",
    "--kind",
    "http",
    "--status",
    "draft",
    "--feature",
    feature.id,
    "--steps",
    '[{"request":{"url":"/items/1"}}]',
  ]);
  const activated = await op<{ activated: Rec[] }>("activate_feature_drafts", ["features", "activate", "Login", ...P]);
  expect(activated.activated.map((a) => a.id)).toContain(draft.id);
  const featureRun = await op<Rec & { runs: { automation_id: string }[] }>("run_feature", ["features", "run", "Login", ...P, "--env", "ci"]);
  expect(featureRun).toMatchObject({ group_id: null, group_name: "feature: Login", trigger: "cli" });
  expect(featureRun.runs.map((r) => r.automation_id)).toContain(draft.id);

  // keys and members
  const second = await s.userWithKey("owner@acme.test", "acme", "owner");
  const keys = await op<{ data: Rec[] }>("list_keys", ["keys", "list"]);
  expect(keys.data.map((k) => k.id)).toContain(second.keyId);
  expect(JSON.stringify(keys)).not.toContain(s.key);
  expect((await op<Rec>("get_key", ["keys", "get", second.keyId])).id).toBe(second.keyId);
  expect(await plain("revoke_key", ["keys", "revoke", second.keyId])).toContain("revoked key");
  const added = await op<Rec & { user_id: string; setup_url: string | null }>("add_member", ["members", "add", "new@acme.test", "--role", "member"]);
  expect(added.setup_url).toBeString();
  expect((await op<{ data: Rec[] }>("list_members", ["members", "list"])).data.map((m) => m.email)).toContain("new@acme.test");
  expect((await op<Rec & { email: string }>("get_member", ["members", "get", added.user_id])).email).toBe("new@acme.test");
  expect((await op("update_member", ["members", "update", added.user_id, "--role", "admin"])).role).toBe("admin");
  expect(await plain("remove_member", ["members", "remove", added.user_id])).toContain("removed member");
  // someone who already has an account is invited, and accepts or declines with their own key
  for (const [email, words] of [
    ["joins@globex.test", ["invitations", "accept"]],
    ["stays@globex.test", ["invitations", "decline"]],
  ] as const) {
    const invitee = await s.userWithKey(email, "globex", "owner");
    const inv = await op<Rec & { invitation_id: string }>("add_member", ["members", "add", email]);
    const as = { env: { SVC_API_KEY: invitee.key } };
    covered.add("list_invitations");
    expect((await cli.json<{ data: Rec[] }>(["invitations", "list"], as)).data.map((i) => i.id)).toEqual([inv.invitation_id]);
    covered.add(words[1] === "accept" ? "accept_invitation" : "decline_invitation");
    const r = await cli.run([...words, inv.invitation_id], as);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  }
  // the workspace's own pending invitations, and cancelling one
  await s.userWithKey("mistaken@globex.test", "globex", "owner");
  const mistaken = await op<Rec & { invitation_id: string }>("add_member", ["members", "add", "mistaken@globex.test"]);
  expect((await op<{ data: Rec[] }>("list_workspace_invitations", ["members", "invitations"])).data.map((i) => i.id)).toEqual([mistaken.invitation_id]);
  expect((await op<Rec>("get_workspace_invitation", ["members", "invitation", mistaken.invitation_id])).id).toBe(mistaken.invitation_id);
  expect(await plain("cancel_invitation", ["members", "cancel-invitation", mistaken.invitation_id])).toContain(
    `cancelled invitation ${mistaken.invitation_id}`,
  );
  expect((await cli.json<{ data: Rec[] }>(["members", "invitations"])).data).toEqual([]);

  // deletions last
  // history: an automation's and the project's, in the shape
  expect(await op("get_automation_history", ["automations", "history", aut.id, ...P, "--days", "7"])).toMatchObject({ days: 7 });
  expect(await op("get_project_history", ["projects", "history", "shop", "--days", "7"])).toMatchObject({ days: 7 });
  expect((await op<{ projects: { slug: string }[] }>("get_dashboard", ["dashboard"])).projects.map((p: { slug: string }) => p.slug)).toContain("shop");
  expect(await plain("delete_automation", ["automations", "delete", aut.id, ...P])).toContain("deleted automation");
  expect(await plain("delete_feature", ["features", "delete", feature.id, ...P])).toContain("deleted feature");
  expect(await plain("delete_environment", ["environments", "delete", env.id, ...P])).toContain("deleted environment");
  expect((await cli.run(["automations", "show", aut.id, ...P])).code).toBe(4);

  const callable = operations
    .filter((o) => !o.sessionOnly)
    .map((o) => o.name)
    .sort();
  expect([...covered].sort()).toEqual(callable);
}, 60_000);

test("tables are aligned, lists say when they are empty, and --json is the API's JSON exactly", async () => {
  const table = await cli.run(["projects", "list"]);
  expect(table.code).toBe(0);
  const [header, row] = table.stdout.split("\n");
  expect(header).toStartWith("ID");
  expect(header?.indexOf("SLUG")).toBe(row?.indexOf("shop"));
  expect(table.stdout).not.toContain("\x1b[");
  // Byte for byte: stdout is the body of the same GET plus one newline (not re-indented, not re-ordered).
  const project = await s.call("POST", "/projects", {
    name: "Bytes ünïcode",
    description: 'a "quoted" line\nand a second',
    openapi: { openapi: "3.0.3", info: { title: "t", version: "1" }, paths: {} },
  });
  expect(project.status).toBe(201);
  const slug = ((await project.json()) as { slug: string }).slug;
  for (const [args, path] of [
    [["projects", "list"], "/projects"],
    [["projects", "show", slug], `/projects/${slug}`],
    [["whoami"], "/me"],
  ] as const) {
    const viaCli = await cli.run([...args, "--json"]);
    const viaApi = await (await s.call("GET", path)).text();
    expect(viaApi).not.toContain("\n");
    expect({ code: viaCli.code, stdout: viaCli.stdout }).toEqual({ code: 0, stdout: `${viaApi}\n` });
  }
  expect((await s.call("DELETE", `/projects/${slug}`)).status).toBe(204);
  const empty = await cli.run(["groups", "list", "--project", "shop"]);
  expect({ code: empty.code, out: empty.stdout.trim() }).toEqual({ code: 0, out: "No groups found." });
  // A list named by its second word says what it holds.
  await cli.json<Rec>([
    "alert-channels",
    "create",
    "quiet",
    "--project",
    "shop",
    "--kind",
    "webhook",
    "--url",
    "http://127.0.0.1:9/q",
    "--secret",
    "quiet-secret-1",
  ]);
  const none = await cli.run(["alert-channels", "deliveries", "quiet", "--project", "shop"]);
  expect(none.stdout.trim()).toBe("No deliveries found.");
});

test("status colours appear on a terminal only, and NO_COLOR turns them off", async () => {
  const binary = `${import.meta.dir}/../dist/svc`;
  const inTty = (extra: string) =>
    Bun.spawn(["script", "-qec", `${extra} ${binary} automations list --project shop`, "/dev/null"], {
      cwd: cli.cwd,
      env: { PATH: "/usr/bin:/bin", ...cli.env },
      stdout: "pipe",
      stderr: "pipe",
    });
  const aut = await s.call("POST", "/projects/shop/automations", { name: "coloured", kind: "http", steps: [{ request: { url: "/x" } }] });
  expect(aut.status).toBe(201);
  const coloured = await new Response(inTty("").stdout).text();
  expect(coloured).toContain("\x1b[32mactive\x1b[0m");
  const plainText = await new Response(inTty("NO_COLOR=1").stdout).text();
  expect(plainText).toContain("active");
  expect(plainText).not.toContain("\x1b[32m");
});

test("svc --help documents the exit codes; usage errors exit 2", async () => {
  const help = await cli.run(["--help"]);
  expect(help.code).toBe(0);
  for (const line of ["0  success", "2  usage error", "3  authentication", "4  not found", "5  rate limited", "6  server or network error"])
    expect(help.stdout).toContain(line);
  const codeLine = (n: number) => help.stdout.split("\n").find((l) => l.trimStart().startsWith(`${n}  `)) ?? "";
  expect(codeLine(1)).toBe("  1  the watched run or generation ended failed, error, timed_out or cancelled; apply --dry-run --exit-code: the project differs");
  expect(codeLine(2)).toContain("a conflict (409), a record changed since it was read (412),");
  expect(codeLine(3)).toContain("authentication (401");
  expect(codeLine(3)).toContain("or not allowed (403)");
  expect((await cli.run(["automations", "frobnicate"])).code).toBe(2);
  expect((await cli.run(["automations", "show"])).code).toBe(2);
  const badNumber = await cli.run(["automations", "update", "aut_x", "--project", "shop", "--retries", "many"]);
  expect({ code: badNumber.code, err: badNumber.stderr }).toEqual({ code: 2, err: expect.stringContaining("not a number") });
});

test("automations create --file x.json and automations update <id> --file x.yaml both work", async () => {
  const P = ["--project", "shop"];
  await Bun.write(
    `${cli.cwd}/new.json`,
    JSON.stringify({
      name: "from json",
      description: "made from a JSON file",
      kind: "http",
      tags: ["file"],
      timeout_ms: 5000,
      steps: [{ name: "read item", request: { method: "GET", url: "/items/7" }, expect: [{ status: 200 }, { json: "$.id", equals: 7 }] }],
    }),
  );
  const created = await cli.json<Rec>(["automations", "create", ...P, "--file", "new.json"]);
  const stored = await (await s.call("GET", `/projects/shop/automations/${created.id}`)).json();
  expect(stored).toMatchObject({
    name: "from json",
    description: "made from a JSON file",
    kind: "http",
    tags: ["file"],
    timeout_ms: 5000,
    steps: [{ name: "read item", request: { method: "GET", url: "/items/7" }, expect: [{ status: 200 }, { json: "$.id", equals: 7 }] }],
  });

  // The documented round trip: show --json, edit (here: as YAML), update --file. Record-only fields are dropped.
  const shown = await cli.json<Rec>(["automations", "show", created.id, ...P]);
  const { stringify } = await import("yaml");
  await Bun.write(
    `${cli.cwd}/edit.yaml`,
    stringify({
      ...shown,
      name: "from yaml",
      retries: 2,
      steps: [{ name: "read item 8", request: { method: "GET", url: "/items/8" }, expect: [{ status: 404 }] }],
    }),
  );
  const updated = await cli.json<Rec>(["automations", "update", created.id, ...P, "--file", "edit.yaml"]);
  expect(updated.id).toBe(created.id);
  const after = await (await s.call("GET", `/projects/shop/automations/${created.id}`)).json();
  expect(after).toMatchObject({
    name: "from yaml",
    description: "made from a JSON file",
    retries: 2,
    tags: ["file"],
    steps: [{ name: "read item 8", request: { method: "GET", url: "/items/8" }, expect: [{ status: 404 }] }],
  });
  expect(after.steps).toHaveLength(1);
  // A boolean is turned off as it is turned on.
  expect((await cli.json<Rec>(["automations", "update", created.id, ...P, "--quarantined"])).quarantined).toBe(true);
  expect((await cli.json<Rec>(["automations", "update", created.id, ...P, "--no-quarantined"])).quarantined).toBe(false);
  // A switch given a value, as other tools take it, is a usage error that says what to write instead; nothing changes.
  const valued = await cli.run(["automations", "update", created.id, ...P, "--quarantined", "false"]);
  expect(valued.code).toBe(2);
  expect(valued.stderr).toBe('svc: --quarantined takes no value: write --no-quarantined, not "--quarantined false" (add --help for usage)\n');
  const json = await cli.run(["automations", "list", ...P, "--json", "true"]);
  expect(json.stderr).toBe('svc: --json takes no value: write --json, not "--json true" (add --help for usage)\n');
  const off = await cli.run(["automations", "list", ...P, "--json", "no"]);
  expect(off.stderr).toBe('svc: --json takes no value: write nothing (leave --json out), not "--json no" (add --help for usage)\n');
  expect((await (await s.call("GET", `/projects/shop/automations/${created.id}`)).json()).quarantined).toBe(false);
  expect((await s.call("DELETE", `/projects/shop/automations/${created.id}`)).status).toBe(204);
});

test("the show --json → update --file round trip works for schedules and alert channels too; a misspelt field is still refused", async () => {
  const P = ["--project", "shop"];
  const target = await cli.json<Rec>([
    "automations",
    "create",
    ...P,
    "--name",
    "scheduled",
    "--kind",
    "http",
    "--steps",
    '[{"request":{"url":"http://127.0.0.1:9/"}}]',
  ]);
  await cli.json<Rec>(["schedules", "create", ...P, "every five", "--target", JSON.stringify({ automation: target.id }), "--every", "300"]);
  const schedule = await cli.json<Rec>(["schedules", "show", "every five", ...P]);
  await Bun.write(`${cli.cwd}/schedule.json`, JSON.stringify({ ...schedule, interval_seconds: 600 }));
  const rescheduled = await cli.json<Rec>(["schedules", "update", "every five", ...P, "--file", "schedule.json"]);
  expect(rescheduled).toMatchObject({ id: schedule.id, interval_seconds: 600, cron: null });

  await cli.json<Rec>(["alert-channels", "create", "hook", ...P, "--kind", "webhook", "--url", "http://127.0.0.1:9/hook", "--secret", "hook-secret-1"]);
  const channel = await cli.json<Rec>(["alert-channels", "show", "hook", ...P]);
  await Bun.write(`${cli.cwd}/channel.yaml`, (await import("yaml")).stringify({ ...channel, url: "http://127.0.0.1:9/other" }));
  const moved = await cli.json<Rec>(["alert-channels", "update", "hook", ...P, "--file", "channel.yaml"]);
  expect(moved).toMatchObject({ id: channel.id, url: "http://127.0.0.1:9/other", has_secret: true });

  // The tables show what an operator looks at schedules and deliveries for.
  const schedules = await cli.run(["schedules", "list", ...P]);
  expect(schedules.stdout.split("\n")[0]?.split(/\s{2,}/)).toEqual(["ID", "NAME", "TARGET", "ENABLED", "NEXT RUN AT", "LAST ERROR"]);
  expect(schedules.stdout).toContain(`automation ${target.id}`);
  await cli.json<Rec>(["alert-channels", "test", "hook", ...P]);
  const deliveries = await cli.run(["alert-channels", "deliveries", "hook", ...P]);
  expect(deliveries.stdout.split("\n")[0]?.split(/\s{2,}/)).toEqual(["DELIVERY ID", "EVENT", "STATUS", "ATTEMPTS", "STATUS CODE", "ERROR", "CREATED AT"]);
  expect(deliveries.stdout).toContain("test");

  await Bun.write(`${cli.cwd}/typo.json`, JSON.stringify({ ...schedule, intervall_seconds: 60 }));
  const typo = await cli.run(["schedules", "update", "every five", ...P, "--file", "typo.json"]);
  expect(typo.code).toBe(2);
  expect(typo.stderr).toContain("intervall_seconds");
});

test("completion scripts come from the command tree, and bash completes nested words", async () => {
  const bash = await cli.run(["completion", "bash"]);
  expect(bash.code).toBe(0);
  const script = `${bash.stdout}
COMP_WORDS=(svc automations ru); COMP_CWORD=2; _svc_complete; echo "\${COMPREPLY[*]}"
COMP_WORDS=(svc automations run aut_1 --w); COMP_CWORD=4; _svc_complete; echo "\${COMPREPLY[*]}"`;
  const out = Bun.spawnSync(["bash", "-c", script], { stdout: "pipe", stderr: "pipe" });
  expect(out.stderr.toString()).toBe("");
  expect(out.stdout.toString().split("\n").slice(0, 2)).toEqual(["runs run", "--watch --watch-timeout"]);
  const fish = await cli.run(["completion", "fish"]);
  expect(fish.stdout).toContain("complete -c svc -f -n '__fish_seen_subcommand_from automations' -a");
  expect((await cli.run(["completion", "zsh"])).stdout).toContain("bashcompinit");
  expect((await cli.run(["completion", "tcsh"])).code).toBe(2);
});
