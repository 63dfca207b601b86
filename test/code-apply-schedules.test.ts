// Tests as code: schedules and alert channels as `type: schedule` / `type: alert_channel` documents of `svc apply`,
// their secrets named by machine environment variables, and `svc pull` writing them back.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { writeFolder } from "./helpers/folder";

// Each test spawns the CLI several times (and on PostgreSQL the first server makes a cluster): more than 5 s on a busy machine.
setDefaultTimeout(60_000);

let s: TestServer;
const clis: SourceCli[] = [];
const SLACK = "https://hooks.slack.example.com/services/T0/B0/s3cr3t";

beforeAll(async () => {
  s = await startTestServer();
  for (const slug of ["sched", "pulls", "wrong"]) expect((await s.call("POST", "/projects", { name: slug, slug })).status).toBe(201);
});
afterAll(async () => {
  for (const c of clis) c.remove();
  await s.stop();
});

function cliFor(project: string, env: Record<string, string> = {}): SourceCli {
  const c = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: project, ...env });
  clis.push(c);
  return c;
}

const folder = (files: Record<string, string>) => writeFolder(files, tempDir("svc-apply-sch-"));

async function list(project: string, what: string) {
  return ((await (await s.call("GET", `/projects/${project}/${what}?limit=200`)).json()) as { data: Record<string, unknown>[] }).data;
}

const BASE = {
  "checks/health.yaml": "name: Health\nkind: http\nsteps:\n  - request: { method: GET, url: 'http://127.0.0.1:9/health' }\n",
  "env.yaml": "type: environment\nname: staging\nvariables:\n  BASE_URL: http://127.0.0.1:9\n",
  "smoke.yaml": "type: group\nkey: smoke\nname: Smoke\nautomations: [checks/health.yaml]\n",
  "schedules/nightly.yaml":
    "type: schedule\nname: nightly\ntarget: { automation: checks/health.yaml }\ncron: '0 3 * * *'\ntimezone: Europe/Berlin\nenvironment: staging\n",
  "schedules/often.yaml": "type: schedule\nkey: often\nname: often\ntarget: { group: smoke }\ninterval_seconds: 600\nenabled: false\n",
  "alerts/hook.yaml":
    "type: alert_channel\nname: team-hook\nkind: webhook\nurl: https://hooks.example.com/svc\nsecret_from: HOOK_SECRET\nevents: [failing, recovered]\n",
  "alerts/slack.yaml": "type: alert_channel\nname: team slack\nkind: slack\nurl_from: SLACK_URL\nremind_every: 3600\n",
};

test("schedules and alert channels apply with the rest, a second apply changes nothing, edits update one, --prune deletes them", async () => {
  const dir = folder(BASE);
  const cli = cliFor("sched", { HOOK_SECRET: "first-secret", SLACK_URL: SLACK });
  const first = await cli.run(["apply", dir]);
  expect(first.stderr).toBe("");
  expect(first.stdout).toContain("+ create schedule schedules/nightly.yaml (nightly)");
  expect(first.stdout).toContain("+ create schedule often (often)");
  expect(first.stdout).toContain("+ create alert_channel alerts/hook.yaml (team-hook)");
  expect(first.stdout).toContain("+ create alert_channel alerts/slack.yaml (team slack)");
  expect(first.stdout).toContain("7 to create, 0 to update, 0 to delete");

  const health = (await list("sched", "automations")).find((a) => a.name === "Health");
  const smoke = (await list("sched", "groups")).find((g) => g.name === "Smoke");
  const staging = (await list("sched", "environments")).find((e) => e.name === "staging");
  const schedules = await list("sched", "schedules");
  expect(schedules.find((x) => x.name === "nightly")).toMatchObject({
    key: "schedules/nightly.yaml",
    target: { automation: health?.id },
    cron: "0 3 * * *",
    timezone: "Europe/Berlin",
    environment_id: staging?.id,
    enabled: true,
  });
  expect(schedules.find((x) => x.name === "often")).toMatchObject({ key: "often", target: { group: smoke?.id }, interval_seconds: 600, enabled: false });
  const channels = await list("sched", "alert-channels");
  expect(channels.find((c) => c.name === "team-hook")).toMatchObject({ kind: "webhook", has_secret: true, events: ["failing", "recovered"] });
  // The incoming-webhook URL is a secret: shown as its origin, kept whole.
  expect(channels.find((c) => c.name === "team slack")).toMatchObject({
    kind: "slack",
    url: "https://hooks.slack.example.com/…",
    remind_every: 3600,
    key: "alerts/slack.yaml",
  });
  // Sealed at rest, as the API stores a Slack URL: it opens to the URL given.
  const [slack] = await s.sql<{ id: string; url: string }>("SELECT id, url FROM alert_channels WHERE name = ?", "team slack");
  expect(slack?.url).not.toContain("hooks");
  expect(s.server.core.secrets.open(slack?.url as string, `alert-channel-url:${slack?.id}`)).toBe(SLACK);
  // The secret is the variable's value, sealed: a test delivery is signed with it.
  expect(JSON.stringify(await s.call("GET", "/projects/sched/alert-channels/team-hook").then((r) => r.json()))).not.toContain("first-secret");

  const again = await cli.run(["apply", dir]);
  expect(again.stdout.trim()).toBe("no changes");
  expect((await list("sched", "schedules")).map((x) => x.updated_at)).toEqual(schedules.map((x) => x.updated_at));
  expect((await list("sched", "alert-channels")).map((x) => x.updated_at)).toEqual(channels.map((x) => x.updated_at));

  // Editing one schedule is one update naming its field; a new secret value is an update of "secret".
  writeFileSync(join(dir, "schedules/nightly.yaml"), BASE["schedules/nightly.yaml"].replace("0 3", "30 4"));
  const edited = await cliFor("sched", { HOOK_SECRET: "second-secret", SLACK_URL: SLACK }).run(["apply", dir]);
  expect(edited.stdout).toContain("~ update schedule schedules/nightly.yaml (nightly): cron");
  expect(edited.stdout).toContain("~ update alert_channel alerts/hook.yaml (team-hook): secret");
  expect(edited.stdout).toContain("0 to create, 2 to update, 0 to delete");
  const nightly = (await list("sched", "schedules")).find((x) => x.name === "nightly");
  expect(nightly?.cron).toBe("30 4 * * *");
  expect(String(nightly?.next_run_at)).toMatch(/T0[23]:30:00/);

  // --prune deletes the applied schedule and channel whose file is gone, and nothing made by hand.
  expect((await s.call("POST", "/projects/sched/schedules", { name: "by hand", target: { tags: ["x"] }, interval_seconds: 60 })).status).toBe(201);
  rmSync(join(dir, "schedules/often.yaml"));
  rmSync(join(dir, "alerts/slack.yaml"));
  const pruned = await cliFor("sched", { HOOK_SECRET: "second-secret" }).run(["apply", dir, "--prune"]);
  expect(pruned.stdout).toContain("- delete schedule often (often)");
  expect(pruned.stdout).toContain("- delete alert_channel alerts/slack.yaml (team slack)");
  expect(pruned.stdout).toContain("0 to create, 0 to update, 2 to delete");
  expect((await list("sched", "schedules")).map((x) => x.name).sort()).toEqual(["by hand", "nightly"]);
  expect((await list("sched", "alert-channels")).map((x) => x.name)).toEqual(["team-hook"]);
}, 60_000);

test("a schedule's time zone is stored in its canonical spelling, and applying the same file again changes nothing", async () => {
  expect((await s.call("POST", "/projects", { name: "zones", slug: "zones" })).status).toBe(201);
  const dir = folder({
    "h.yaml": BASE["checks/health.yaml"],
    "nightly.yaml": "type: schedule\nname: nightly\ntarget: { automation: h.yaml }\ncron: '0 3 * * *'\ntimezone: europe/berlin\n",
  });
  const cli = cliFor("zones");
  expect((await cli.run(["apply", dir])).stdout).toContain("2 to create");
  expect((await list("zones", "schedules")).find((x) => x.name === "nightly")?.timezone).toBe("Europe/Berlin");
  expect((await cli.run(["apply", dir])).stdout.trim()).toBe("no changes");
});

test("a missing secret variable, an unknown target and a bad cron are 400s naming the file and line, and nothing is written", async () => {
  const dir = folder({
    "h.yaml": BASE["checks/health.yaml"],
    "hook.yaml": BASE["alerts/hook.yaml"],
  });
  const r = await cliFor("wrong").run(["apply", dir]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain("hook.yaml:5: secret_from: the environment variable HOOK_SECRET is not set");
  expect(await list("wrong", "automations")).toEqual([]);

  const bad = await s.call("POST", "/projects/wrong/apply", {
    documents: [{ path: "s.yaml", text: "type: schedule\nname: s\ntarget:\n  automation: nowhere.yaml\ncron: '0 3 * * *'\n" }],
  });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { details: unknown[] }).details).toEqual([
    { path: "s.yaml:4", message: 'target.automation: no automation has the key or the exact name "nowhere.yaml"' },
  ]);
  const cron = await s.call("POST", "/projects/wrong/apply", {
    documents: [{ path: "c.yaml", text: "type: schedule\nname: c\ntarget: { tags: [a] }\ncron: '99 * * * *'\n" }],
  });
  expect(cron.status).toBe(400);
  const details = ((await cron.json()) as { details: { path: string; message: string }[] }).details;
  expect(details[0]?.path).toBe("c.yaml:4");
  expect(details[0]?.message).toStartWith("cron: ");
  const twoKinds = await s.call("POST", "/projects/wrong/apply", {
    documents: [{ path: "t.yaml", text: "type: schedule\nname: t\ntarget:\n  automation: h.yaml\n  group: g.yaml\ncron: '0 3 * * *'\n" }],
  });
  expect(twoKinds.status).toBe(400);
  expect(((await twoKinds.json()) as { details: { path: string; message: string }[] }).details).toEqual([
    { path: "t.yaml:3", message: "target: give exactly one of automation, group or tags" },
  ]);
  const secretInFile = await s.call("POST", "/projects/wrong/apply", {
    documents: [{ path: "a.yaml", text: "type: alert_channel\nname: a\nkind: webhook\nurl: https://h.example.com/\nsecret: plain-text-secret\n" }],
  });
  expect(secretInFile.status).toBe(400);
  expect(await list("wrong", "schedules")).toEqual([]);
  expect(await list("wrong", "alert-channels")).toEqual([]);
}, 30_000);

test("pull writes schedules and alert channels (secrets as variable names) that apply takes back unchanged", async () => {
  const cli = cliFor("pulls", { HOOK_SECRET: "first-secret", SLACK_URL: SLACK });
  expect((await cli.run(["apply", folder(BASE)])).code).toBe(0);
  // Made by hand: adopted by name on the first apply of the pulled folder.
  expect((await s.call("POST", "/projects/pulls/schedules", { name: "by hand", target: { tags: ["x"] }, interval_seconds: 60 })).status).toBe(201);
  const out = tempDir("svc-pull-sch-");
  const pulled = await cli.run(["pull", out]);
  expect(pulled.stdout).toContain("3 schedule(s), 2 alert channel(s)");
  expect(parse(readFileSync(join(out, "schedules/nightly.yaml"), "utf8"))).toEqual({
    type: "schedule",
    name: "nightly",
    target: { automation: "checks/health.yaml" },
    environment: "staging",
    cron: "0 3 * * *",
    timezone: "Europe/Berlin",
    enabled: true,
  });
  const slack = readFileSync(join(out, "alerts/slack.yaml"), "utf8");
  expect(slack).toContain("url_from: ALERT_TEAM_SLACK_URL");
  expect(slack).not.toContain("hooks.slack");
  expect(readFileSync(join(out, "alerts/hook.yaml"), "utf8")).toContain("secret_from: ALERT_TEAM_HOOK_SECRET");

  const round = cliFor("pulls", { ALERT_TEAM_HOOK_SECRET: "first-secret", ALERT_TEAM_SLACK_URL: SLACK });
  const adopt = await round.run(["apply", out]);
  expect(adopt.stdout).toContain("~ update schedule schedules/by-hand.yaml (by hand): key");
  expect(adopt.stdout).toContain("0 to create, 1 to update, 0 to delete");
  const before = await list("pulls", "schedules");
  expect((await round.run(["apply", out, "--prune"])).stdout.trim()).toBe("no changes");
  expect((await list("pulls", "schedules")).map((x) => x.updated_at)).toEqual(before.map((x) => x.updated_at));
}, 60_000);

test("an unknown field is told at its own line, not at the top of the file", async () => {
  const documents = [
    { path: "a.yaml", text: "name: Retried\nkind: http\nsteps:\n  - request: { url: http://x/ }\nretrys: 2\n" },
    { path: "g.yaml", text: "type: group\nname: G\nautomations: []\n\nmodee: sequential\n" },
  ];
  const res = await s.call("POST", "/projects/wrong/apply", { documents });
  expect(res.status).toBe(400);
  const details = ((await res.json()) as { details: { path: string; message: string }[] }).details;
  expect(details.find((d) => d.path.startsWith("a.yaml"))).toMatchObject({ path: "a.yaml:5" });
  expect(details.find((d) => d.path.startsWith("a.yaml"))?.message).toContain('unknown field "retrys" (did you mean "retries"?)');
  expect(details.find((d) => d.path.startsWith("g.yaml"))).toMatchObject({ path: "g.yaml:5" });
});
