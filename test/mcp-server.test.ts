// `svc mcp` spawned from the compiled binary and driven by the SDK's Client over stdio, against a real server.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { toolsetOf } from "../mcp/toolsets";
import { operations } from "../src/manifest/index";
import { BINARY, requireBinary, runBinary } from "./helpers/binary";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";

// Each test spawns the compiled binary several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let client: Client;
let home: string;

async function connect(args: string[], env: Record<string, string>): Promise<Client> {
  requireBinary();
  const c = new Client({ name: "svc-test", version: "1.0.0" });
  await c.connect(
    new StdioClientTransport({
      command: BINARY,
      args: ["mcp", ...args],
      env: { PATH: "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: `${home}/config`, ...env },
      stderr: "pipe",
    }),
  );
  return c;
}

type Structured = Record<string, unknown> & { id: string };
async function call(c: Client, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; data: Structured; text: string }> {
  const r = await c.callTool({ name, arguments: args });
  const content = r.content as { type: string; text?: string }[];
  return { isError: r.isError === true, data: r.structuredContent as Structured, text: content[0]?.text ?? "" };
}

beforeAll(async () => {
  s = await startTestServer();
  home = tempDir("svc-mcp-");
  client = await connect(["--project", "shop"], { SVC_SERVER: s.url, SVC_API_KEY: s.key });
});
afterAll(async () => {
  await client.close();
  await s.stop();
});

test("tools/list is the manifest one to one (but the admin toolset, off unless named), plus the wait tools, with hints as annotations", async () => {
  const { tools } = await client.listTools();
  const expected = operations.filter((o) => !o.sessionOnly && toolsetOf(o) !== "admin");
  expect(tools.map((t) => t.name).sort()).toEqual([...expected.map((o) => o.name), "wait_for_generation", "wait_for_group_run", "wait_for_run"].sort());
  for (const op of expected) {
    const tool = tools.find((t) => t.name === op.name);
    expect(tool?.description).toStartWith(op.summary);
    expect(tool?.annotations).toMatchObject({
      readOnlyHint: op.hints.readOnly ?? false,
      destructiveHint: op.hints.destructive ?? false,
      idempotentHint: op.hints.idempotent ?? false,
    });
  }
  const get = tools.find((t) => t.name === "get_automation");
  expect(Object.keys(get?.inputSchema.properties ?? {}).sort()).toEqual(["automation", "project"]);
  // --project shop is the default, so project is not required.
  expect(get?.inputSchema.required).toEqual(["automation"]);
  const update = tools.find((t) => t.name === "update_automation");
  expect(Object.keys(update?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["project", "automation", "steps", "status", "name"]));
  const wait = tools.find((t) => t.name === "wait_for_run");
  expect(wait?.inputSchema.properties?.timeout_seconds).toMatchObject({ maximum: 50 });
});

test("tools read and change real data, with the API's JSON as structured content and a text summary", async () => {
  const project = await call(client, "create_project", { name: "Shop" });
  expect(project.isError).toBe(false);
  expect(project.data).toMatchObject({ slug: "shop" });
  expect(project.text).toStartWith("create_project: ");
  const aut = await call(client, "create_automation", {
    name: "item exists",
    kind: "http",
    steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }],
  });
  expect(aut.isError).toBe(false);
  const res = await s.call("GET", `/projects/shop/automations/${aut.data.id}`);
  // The API's JSON, and its ETag as `etag` (what if_match takes back).
  expect(aut.data).toEqual({ ...(await res.json()), etag: res.headers.get("etag") });
  const got = await call(client, "get_automation", { project: "shop", automation: aut.data.id });
  expect(got.data.name).toBe("item exists");
  const updated = await call(client, "update_automation", { automation: aut.data.id, status: "disabled" });
  expect(updated.data.status).toBe("disabled");
  const list = await call(client, "list_projects", {});
  expect(list.text).toStartWith("list_projects: 1 item");
  expect((list.data.data as { slug: string }[]).map((p) => p.slug)).toEqual(["shop"]);
  await call(client, "update_automation", { automation: aut.data.id, status: "active" });
  const run = await call(client, "run_automation", { automation: aut.data.id });
  expect(run.data).toMatchObject({ automation_id: aut.data.id, trigger: "mcp" });
  const junit = await call(client, "get_run_junit", { run: run.data.id });
  expect(junit.text).toContain("<testsuite");
  const deleted = await call(client, "delete_automation", { automation: aut.data.id });
  expect(deleted).toMatchObject({ isError: false, data: { ok: true } });
  expect((await s.call("GET", `/projects/shop/automations/${aut.data.id}`)).status).toBe(404);
});

test("API errors come back as isError results with the code and message", async () => {
  const missing = await call(client, "get_automation", { automation: "aut_nothere" });
  expect(missing.isError).toBe(true);
  expect(missing.data).toMatchObject({ status: 404, error: "not_found" });
  expect(missing.text).toStartWith("not_found: ");
  // Checked by the server (an http automation takes only request steps): its 400 comes back with details.
  const invalid = await call(client, "create_automation", { name: "x", kind: "http", steps: [{ goto: "/" }] });
  expect(invalid.isError).toBe(true);
  expect(invalid.data).toMatchObject({ status: 400, error: "invalid_request", details: [{ path: "body.steps.0", message: expect.any(String) }] });
  // Checked by svc's schemas (the same message as REST), not by the MCP library's vague "Invalid input".
  const shape = await call(client, "create_feature", { name: "x", target: { kind: "web" } });
  expect(shape.isError).toBe(true);
  expect(shape.text).toContain("url");
  expect((await (await s.call("GET", "/projects/shop/features")).json()).data).toEqual([]);
  expect((await (await s.call("GET", "/projects/shop/automations")).json()).data).toEqual([]);
  const bad = await client.callTool({ name: "get_run", arguments: { project: "shop" } });
  expect(bad.isError).toBe(true);
});

test("a revoked key turns into isError unauthorized, not a crash", async () => {
  const other = await s.userWithKey("mcp2@acme.test", "acme", "member");
  const c = await connect([], { SVC_SERVER: s.url, SVC_API_KEY: other.key });
  try {
    expect((await call(c, "list_projects", {})).isError).toBe(false);
    expect((await s.call("DELETE", `/keys/${other.keyId}`, undefined, other.key)).status).toBe(204);
    const r = await call(c, "list_projects", {});
    expect(r).toMatchObject({ isError: true, data: { status: 401, error: "unauthorized" } });
    // Said for stdio, where nobody writes an Authorization header.
    expect(r.text).toContain("set SVC_API_KEY in the MCP client's configuration to a valid key");
    expect(r.text).not.toContain("Authorization");
  } finally {
    await c.close();
  }
});

test("without a key, svc mcp says so on stderr and exits non-zero", async () => {
  const r = await runBinary(["mcp"], { env: { HOME: home, XDG_CONFIG_HOME: `${home}/empty`, SVC_SERVER: s.url } });
  expect(r.code).toBe(3);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("no API key");
});

test("svc mcp refuses to start under a .svc.json that holds a key (exit 2)", async () => {
  const dir = tempDir("svc-mcp-svcjson-");
  await Bun.write(`${dir}/.svc.json`, JSON.stringify({ project: "shop", apiKey: s.key }));
  const r = await runBinary(["mcp"], { cwd: dir, env: { HOME: home, XDG_CONFIG_HOME: `${home}/empty`, SVC_SERVER: s.url, SVC_API_KEY: s.key } });
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("must never be in .svc.json");
});

test("rate limited beyond what an MCP client would wait: an isError result with the Retry-After", async () => {
  const limited = await startTestServer({ rate_limit: { per_ip_per_hour: 10_000, per_workspace_per_hour: 2 } });
  const c = await connect([], { SVC_SERVER: limited.url, SVC_API_KEY: limited.key });
  try {
    expect((await call(c, "list_projects", {})).isError).toBe(false);
    expect((await call(c, "list_projects", {})).isError).toBe(false);
    const started = performance.now();
    const r = await call(c, "list_projects", {});
    expect(r.data.retry_after_seconds as number).toBeGreaterThan(20);
    expect(r).toMatchObject({ isError: true, data: { status: 429, error: "rate_limited" } });
    expect(performance.now() - started).toBeLessThan(3000);
  } finally {
    await c.close();
    await limited.stop();
  }
});

test("resources: the automation format, the generation guide and the automation JSON Schema, embedded in the binary", async () => {
  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri).sort()).toEqual(["svc://docs/automations", "svc://docs/generation", "svc://schema/automation"]);
  const { readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const docs = join(import.meta.dir, "..", "docs");
  const read = async (uri: string) => (await client.readResource({ uri })).contents[0] as { uri: string; mimeType: string; text: string };

  const format = await read("svc://docs/automations");
  expect(format.mimeType).toBe("text/markdown");
  expect(format.text).toBe(readFileSync(join(docs, "automations.md"), "utf8"));
  expect((await read("svc://docs/generation")).text).toBe(readFileSync(join(docs, "generation.md"), "utf8"));

  // The schema accepts the documented examples and refuses a broken step, as the server does.
  const schema = JSON.parse((await read("svc://schema/automation")).text);
  const { default: Ajv2020 } = await import("ajv/dist/2020");
  const validate = new Ajv2020({ strict: false }).compile(schema);
  // The doc's whole-automation examples (other json blocks show fragments).
  const parse = (t: string): Record<string, unknown> | null => {
    try {
      return JSON.parse(t) as Record<string, unknown>;
    } catch {
      return null;
    }
  };
  const examples = [...format.text.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => parse(m[1] as string))
    .filter((e): e is Record<string, unknown> => e !== null && typeof e === "object" && "steps" in e && "kind" in e);
  expect(examples.length).toBeGreaterThanOrEqual(1);
  // The canonical browser form (PRODUCT.md) too.
  examples.push({
    name: "sign in works",
    kind: "browser",
    steps: [
      { goto: "/login" },
      { fill: { locator: "label=Email", value: "{{USER_EMAIL}}" } },
      { click: 'role=button[name="Sign in"]' },
      { expect: { text: "Welcome" } },
      { expect: { url: "/dashboard" } },
      { screenshot: "after-sign-in" },
    ],
  });
  for (const e of examples) expect({ name: e.name, valid: validate(e), errors: validate.errors }).toEqual({ name: e.name, valid: true, errors: null });
  const broken = { name: "x", kind: "http", steps: [{ request: { url: "/a" }, expect: [{ status: "two hundred" }] }] };
  expect(validate(broken)).toBe(false);
  expect((await s.call("POST", "/projects/shop/automations", broken)).status).toBe(400);
});

test("prompts: automate a feature, explain a failed run, report failures; every tool they name exists", async () => {
  const { prompts } = await client.listPrompts();
  expect(prompts.map((p) => [p.name, (p.arguments ?? []).map((a) => `${a.name}${a.required ? "" : "?"}`)])).toEqual([
    ["automate_feature", ["project", "feature"]],
    ["triage_run", ["project", "run"]],
    ["failure_report", ["project"]],
  ]);
  const { tools } = await client.listTools();
  const toolNames = new Set(tools.map((t) => t.name));
  const texts: Record<string, string> = {};
  for (const [name, args] of [
    ["automate_feature", { project: "shop", feature: "fea_123" }],
    ["triage_run", { project: "shop", run: "run_456" }],
    ["failure_report", { project: "shop" }],
  ] as const) {
    const got = await client.getPrompt({ name, arguments: { ...args } });
    expect(got.messages).toHaveLength(1);
    const text = (got.messages[0]?.content as { type: string; text: string }).text;
    for (const v of Object.values(args)) expect(text).toContain(v);
    texts[name] = text;
    // A prompt that names a tool the server does not have would send the assistant astray.
    const named = [...text.matchAll(/\b(?:get|list|create|update|start|run|wait|cancel|delete)_[a-z_]+\b/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(2);
    expect(named.filter((n) => !toolNames.has(n))).toEqual([]);
    for (const uri of text.match(/svc:\/\/[a-z/]+/g) ?? [])
      expect(["svc://docs/automations", "svc://docs/generation", "svc://schema/automation"]).toContain(uri);
  }
  expect(texts.triage_run).toContain("get_run");
  expect(texts.automate_feature).toContain("wait_for_run");
  // A missing required argument is refused.
  await expect(client.getPrompt({ name: "triage_run", arguments: { project: "shop" } })).rejects.toThrow();
});

test("--read-only and --toolsets narrow the tools; an unknown toolset exits 2 naming it", async () => {
  const c = await connect(["--read-only", "--toolsets", "runs,automations"], { SVC_SERVER: s.url, SVC_API_KEY: s.key });
  try {
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["get_run", "wait_for_run", "list_automations", "get_automation"]));
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect(tools.map((t) => t.name)).not.toContain("list_projects");
  } finally {
    await c.close();
  }
  const admin = await connect(["--toolsets", "admin"], { SVC_SERVER: s.url, SVC_API_KEY: s.key });
  try {
    expect((await admin.listTools()).tools.map((t) => t.name)).toContain("add_member");
  } finally {
    await admin.close();
  }
  const r = await runBinary(["mcp", "--toolsets", "runs,nope"], {
    env: { HOME: home, XDG_CONFIG_HOME: `${home}/empty`, SVC_SERVER: s.url, SVC_API_KEY: s.key },
  });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('"nope"');
});
