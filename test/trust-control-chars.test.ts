// Control characters never reach a terminal: every name, tag and apply key or path holding a C0/C1 control or a bidi
// override is refused with a 400 naming the field (multi-line text keeps its newlines and tabs), and the compiled
// CLI shows a name stored before that rule as visible escapes (`\x1b`), never raw; `svc pull` makes no such key a
// file name. Over REST, the web session and the compiled binary.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { WebClient } from "./helpers/browser";
import { type CliSandbox, cliSandbox } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";

// The compiled binary is started several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: CliSandbox;
let member = "";
let automationId = "";

/** Clears the screen and retitles the window when written raw to a terminal. */
const HOSTILE = "esc\u001b[2J\u001b]0;pwn\u0007name";
/** What the CLI shows instead: every control character as its escape. */
const SHOWN = "esc\\x1b[2J\\x1b]0;pwn\\x07name";
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];

async function created(path: string, body: unknown, key?: string): Promise<string> {
  const res = await s.call("POST", path, body, key);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  await created("/projects", { name: "Project A", slug: "pa" });
  member = (await s.userWithKey("mem@acme.test", "acme", "member")).key;
  automationId = await created("/projects/pa/automations", { name: "plain", kind: "http", steps });
  cli = cliSandbox({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "pa" });
});

afterAll(async () => {
  cli?.remove();
  await s.stop();
});

type Refusal = { error: string; message: string; details: { path: string; message: string }[] };

async function refused(method: string, path: string, body: unknown, field: string, key?: string): Promise<void> {
  const res = await s.call(method, path, body, key);
  const answer = (await res.json()) as Refusal;
  expect({ path, status: res.status, error: answer.error }).toEqual({ path, status: 400, error: "invalid_request" });
  expect(answer.details).toContainEqual({ path: field, message: "must not contain control characters" });
  expect(answer.message).toContain(`${field}: must not contain control characters`);
}

/** Each name-like field of each operation, with a body that the same field without the control character passes. */
const NAMED: { method: string; path: string; body: (bad: string) => unknown; field: string }[] = [
  { method: "POST", path: "/projects", body: (n) => ({ name: n, slug: `s${Math.random().toString(36).slice(2, 8)}` }), field: "body.name" },
  { method: "PATCH", path: "/projects/pa", body: (n) => ({ name: n }), field: "body.name" },
  { method: "POST", path: "/projects/pa/features", body: (n) => ({ name: n }), field: "body.name" },
  { method: "POST", path: "/projects/pa/automations", body: (n) => ({ name: n, kind: "http", steps }), field: "body.name" },
  {
    method: "POST",
    path: "/projects/pa/automations",
    body: (n) => ({ name: `tagged ${Math.random()}`, kind: "http", steps, tags: [n] }),
    field: "body.tags.0",
  },
  { method: "PATCH", path: "/projects/pa/automations/plain", body: (n) => ({ name: n }), field: "body.name" },
  { method: "POST", path: "/projects/pa/groups", body: (n) => ({ name: n }), field: "body.name" },
  { method: "POST", path: "/projects/pa/environments", body: (n) => ({ name: n }), field: "body.name" },
  {
    method: "POST",
    path: "/projects/pa/schedules",
    body: (n) => ({ name: n, target: { automation: automationId }, interval_seconds: 3600, enabled: false }),
    field: "body.name",
  },
  {
    method: "POST",
    path: "/projects/pa/schedules",
    body: (n) => ({ name: `by tag ${Math.random()}`, target: { tags: [n] }, interval_seconds: 3600 }),
    field: "body.target.tags.0",
  },
  {
    method: "POST",
    path: "/projects/pa/alert-channels",
    body: (n) => ({ name: n, kind: "webhook", url: "https://hooks.example.test/svc", secret: "sign-with-this" }),
    field: "body.name",
  },
  { method: "POST", path: "/runners", body: (n) => ({ name: n }), field: "body.name" },
  { method: "POST", path: "/members", body: (n) => ({ email: `m${Math.random().toString(36).slice(2, 8)}@acme.test`, name: n }), field: "body.name" },
];

test("a name, tag or key holding a control or bidi character is a 400 naming the field; the same without it is taken", async () => {
  for (const bad of [HOSTILE, "tab\there", "del\u007f", "csi\u009b2J", "bell\u0007", "nul\u0000", "rtl\u202eexe.txt", "isolate\u2066x\u2069"]) {
    for (const c of NAMED) await refused(c.method, c.path, c.body(bad), c.field);
  }
  // The member of the report, creating an automation in the owner's project.
  await refused("POST", "/projects/pa/automations", { name: HOSTILE, kind: "http", steps }, "body.name", member);
  for (const c of NAMED) {
    const res = await s.call(c.method, c.path, c.body(`fine name ${Math.random().toString(36).slice(2, 8)}`));
    expect({ path: c.path, status: res.status, body: res.ok ? "" : await res.text() }).toEqual({
      path: c.path,
      status: c.method === "POST" ? 201 : 200,
      body: "",
    });
  }
  // A trailing newline (`$(cat file)`) is trimmed away as before, not refused.
  expect((await s.call("POST", "/projects/pa/features", { name: "Checkout\n" })).status).toBe(201);
});

test("an API key's name (web session) is refused the same way", async () => {
  const web = new WebClient(s.url);
  expect((await web.signIn("mem@acme.test", "correct horse battery")).status).toBe(200);
  const res = await web.send("POST", "/api/v1/ops/keys", { name: HOSTILE });
  expect(res.status).toBe(400);
  expect(((await res.json()) as Refusal).details).toContainEqual({ path: "body.name", message: "must not contain control characters" });
  expect((await web.send("POST", "/api/v1/ops/keys", { name: "laptop" })).status).toBe(201);
});

test("multi-line text keeps its newlines and tabs: descriptions and acceptance criteria are taken", async () => {
  const text = "first line\n\tindented\r\nthird";
  const aut = await s.call("POST", "/projects/pa/automations", { name: "described", kind: "http", steps, description: text });
  expect(aut.status).toBe(201);
  expect(((await aut.json()) as { description: string }).description).toBe(text);
  const fea = await s.call("POST", "/projects/pa/features", { name: "criteria", description: text, acceptance_criteria: text });
  expect(fea.status).toBe(201);
  expect(((await fea.json()) as { acceptance_criteria: string }).acceptance_criteria).toBe(text);
});

test("apply refuses a document path or key with a control character, naming the field, the file and its line", async () => {
  const doc = (path: string, text: string) => ({ documents: [{ path, text }], dry_run: true });
  await refused("POST", "/projects/pa/apply", doc("automations/\u001b[2Jx.yaml", "name: x\nkind: http\nsteps: []\n"), "body.documents.0.path");
  await refused("POST", "/projects/pa/test-runs", doc("a\u0007.yaml", "name: x\nkind: http\n"), "body.documents.0.path");
  for (const text of [
    `name: x\nkey: "k\\e[2J.yaml"\nkind: http\nsteps:\n  - request: { url: "http://127.0.0.1:9/" }\n`,
    `type: group\nkey: "g\\a"\nname: g\n`,
    `type: environment\nkey: "e\\u202e"\nname: e\n`,
  ]) {
    const res = await s.call("POST", "/projects/pa/apply", doc("doc.yaml", text));
    expect(res.status).toBe(400);
    const answer = (await res.json()) as Refusal;
    expect(answer.error).toBe("invalid_request");
    expect(answer.details).toContainEqual({ path: "doc.yaml:2", message: "key: must not contain control characters" });
  }
  const name = await s.call("POST", "/projects/pa/apply", doc("doc.yaml", `type: group\nname: "g\\e]0;pwn\\a"\n`));
  expect(name.status).toBe(400);
  expect(((await name.json()) as Refusal).details).toContainEqual({ path: "doc.yaml:2", message: "name: must not contain control characters" });
});

test("the CLI shows a stored name's control characters as escapes in tables, records and errors; --json stays exact", async () => {
  // Stored before such names were refused.
  await s.sql("UPDATE automations SET name = ?, description = ? WHERE id = ?", HOSTILE, "line one\nline\u001b[31m two", automationId);

  const list = await cli.run(["automations", "list", "--project", "pa"]);
  expect(list.code).toBe(0);
  expect(list.stdout).toContain(SHOWN);
  expect(list.stdout).not.toMatch(RAW_CONTROL);

  const show = await cli.run(["automations", "show", automationId]);
  expect(show.code).toBe(0);
  expect(show.stdout).toContain(SHOWN);
  expect(show.stdout).toContain("line\\x1b[31m two");
  expect(show.stdout).not.toMatch(RAW_CONTROL);

  const json = await cli.run(["automations", "list", "--project", "pa", "--json"]);
  expect(json.code).toBe(0);
  expect(json.stdout).not.toMatch(RAW_CONTROL);
  const names = (JSON.parse(json.stdout) as { data: { name: string }[] }).data.map((a) => a.name);
  expect(names).toContain(HOSTILE);

  // An error quoting what was asked for: the message is shown, never acted on.
  const missing = await cli.run(["automations", "show", `nothing\u001b[2J\u009b31m`]);
  expect(missing.code).toBe(4);
  expect(missing.stderr).not.toMatch(RAW_CONTROL);
});

test("svc pull never makes a key with a control character a file name: the record is written under its name, its key inside", async () => {
  const key = "automations/\u001b[2Jevil.yaml";
  await s.sql("UPDATE automations SET key = ?, source = 'applied' WHERE id = ?", key, automationId);
  const dir = join(cli.cwd, "pulled");
  const r = await cli.run(["pull", dir]);
  expect(r.code).toBe(0);
  expect(r.stdout).not.toMatch(RAW_CONTROL);
  const files = readdirSync(dir, { recursive: true }).map(String);
  expect(files.filter((f) => RAW_CONTROL.test(f))).toEqual([]);
  const mine = files
    .filter((f) => f.startsWith("automations/") && f.endsWith(".yaml"))
    .map((f) => parse(readFileSync(join(dir, f), "utf8")) as { key?: string });
  expect(mine.map((d) => d.key)).toContain(key);
});
