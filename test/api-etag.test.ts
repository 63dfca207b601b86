// No lost updates: every read of one record carries an ETag (also the answers of create and update, and cached
// reads); PATCH and DELETE honour If-Match, refusing a stale one with 412 precondition_failed and changing nothing.
// Without If-Match, as before. On REST, the CLI (--if-match) and MCP (if_match).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { join } from "node:path";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";

setDefaultTimeout(60_000);

let s: TestServer;
let cli: SourceCli;
const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  expect((await s.call("POST", "/projects", { name: "Tags", slug: "tags" })).status).toBe(201);
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "tags" });
});

afterAll(async () => {
  cli.remove();
  await s.stop();
});

test("reads, creates and updates carry an ETag that changes with every change; a cached read carries the same", async () => {
  const created = await s.call("POST", "/projects/tags/automations", { name: "etag a", kind: "http", steps });
  expect(created.status).toBe(201);
  const tag0 = created.headers.get("etag");
  expect(tag0).toMatch(/^"[A-Za-z0-9_-]+"$/);
  const first = await s.call("GET", "/projects/tags/automations/etag%20a");
  const again = await s.call("GET", "/projects/tags/automations/etag%20a");
  expect(first.headers.get("etag")).toBe(tag0);
  expect(again.headers.get("etag")).toBe(tag0);
  const updated = await s.call("PATCH", "/projects/tags/automations/etag%20a", { description: "x" });
  expect(updated.status).toBe(200);
  expect(updated.headers.get("etag")).not.toBe(tag0);
  expect((await s.call("GET", "/projects/tags/automations/etag%20a")).headers.get("etag")).toBe(updated.headers.get("etag"));
  for (const path of ["/projects/tags", "/projects/tags/groups", "/projects/tags/features", "/projects/tags/environments"]) {
    if (path === "/projects/tags") {
      expect((await s.call("GET", path)).headers.get("etag")).toMatch(/^"/);
      continue;
    }
    const res = await s.call("POST", path, { name: `etag ${path}` });
    expect(res.status).toBe(201);
    expect(res.headers.get("etag")).toMatch(/^"/);
  }
});

test("PATCH and DELETE with a stale If-Match are 412 precondition_failed and change nothing; a current one or none succeeds", async () => {
  const created = await s.call("POST", "/projects/tags/automations", { name: "etag b", kind: "http", steps });
  const tag0 = created.headers.get("etag") ?? "";
  // Another tab saves first.
  const other = await s.call("PATCH", "/projects/tags/automations/etag%20b", { description: "other tab" }, undefined, { "if-match": tag0 });
  expect(other.status).toBe(200);
  const stale = await s.call("PATCH", "/projects/tags/automations/etag%20b", { description: "stale tab" }, undefined, { "if-match": tag0 });
  expect(stale.status).toBe(412);
  const body = (await stale.json()) as { error: string; message: string };
  expect(body.error).toBe("precondition_failed");
  expect(body.message).toContain(other.headers.get("etag") ?? "?");
  const now = (await (await s.call("GET", "/projects/tags/automations/etag%20b")).json()) as { description: string };
  expect(now.description).toBe("other tab");
  expect((await s.call("DELETE", "/projects/tags/automations/etag%20b", undefined, undefined, { "if-match": tag0 })).status).toBe(412);
  expect((await s.call("GET", "/projects/tags/automations/etag%20b")).status).toBe(200);
  // `*` and a list holding the current tag match.
  expect((await s.call("PATCH", "/projects/tags/automations/etag%20b", { description: "star" }, undefined, { "if-match": "*" })).status).toBe(200);
  const current = (await s.call("GET", "/projects/tags/automations/etag%20b")).headers.get("etag") ?? "";
  expect((await s.call("DELETE", "/projects/tags/automations/etag%20b", undefined, undefined, { "if-match": `"nope", ${current}` })).status).toBe(204);
  // Without If-Match: as before, the last write wins.
  await s.call("POST", "/projects/tags/groups", { name: "etag g" });
  expect((await s.call("PATCH", "/projects/tags/groups/etag%20g", { description: "a" })).status).toBe(200);
  expect((await s.call("PATCH", "/projects/tags/groups/etag%20g", { description: "b" })).status).toBe(200);
  const g = await s.call("GET", "/projects/tags/groups/etag%20g");
  expect((await s.call("PATCH", "/projects/tags/groups/etag%20g", { description: "c" }, undefined, { "if-match": '"stale"' })).status).toBe(412);
  expect((await s.call("DELETE", "/projects/tags/groups/etag%20g", undefined, undefined, { "if-match": g.headers.get("etag") ?? "" })).status).toBe(204);
});

test("environments, features and projects honour If-Match too", async () => {
  const env = await s.call("POST", "/projects/tags/environments", { name: "etag env", variables: { A: "1" } });
  const envTag = env.headers.get("etag") ?? "";
  expect((await s.call("PATCH", "/projects/tags/environments/etag%20env", { variables_merge: { B: "2" } }, undefined, { "if-match": envTag })).status).toBe(
    200,
  );
  expect((await s.call("PATCH", "/projects/tags/environments/etag%20env", { variables_merge: { C: "3" } }, undefined, { "if-match": envTag })).status).toBe(
    412,
  );
  const feature = await s.call("POST", "/projects/tags/features", { name: "etag feature" });
  const featureTag = feature.headers.get("etag") ?? "";
  await s.call("PATCH", "/projects/tags/features/etag%20feature", { description: "x" });
  expect((await s.call("DELETE", "/projects/tags/features/etag%20feature", undefined, undefined, { "if-match": featureTag })).status).toBe(412);
  const project = await s.call("GET", "/projects/tags");
  await s.call("PATCH", "/projects/tags", { description: "changed" });
  expect((await s.call("PATCH", "/projects/tags", { description: "stale" }, undefined, { "if-match": project.headers.get("etag") ?? "" })).status).toBe(412);
});

test("the CLI passes --if-match and exits 2 on a stale one", async () => {
  const created = await s.call("POST", "/projects/tags/automations", { name: "etag cli", kind: "http", steps });
  const tag0 = created.headers.get("etag") ?? "";
  const ok = await cli.run(["automations", "update", "etag cli", "--description", "one", "--if-match", tag0]);
  expect(ok.code).toBe(0);
  const stale = await cli.run(["automations", "update", "etag cli", "--description", "two", "--if-match", tag0]);
  expect(stale.code).toBe(2);
  expect(stale.stderr).toContain("precondition_failed");
  const help = await cli.run(["automations", "update", "--help"]);
  expect(help.stdout).toContain("--if-match");
});

test("MCP tools of PATCH and DELETE take if_match; a stale one is an error result", async () => {
  const created = await s.call("POST", "/projects/tags/automations", { name: "etag mcp", kind: "http", steps });
  const tag0 = created.headers.get("etag") ?? "";
  await s.call("PATCH", "/projects/tags/automations/etag%20mcp", { description: "moved on" });
  const home = tempDir("svc-mcp-");
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dir, "..", "src", "main.ts"), "mcp", "--project", "tags"],
      env: { PATH: "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: `${home}/config`, SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stderr: "pipe",
    }),
  );
  try {
    const { tools } = await client.listTools();
    const update = tools.find((t) => t.name === "update_automation");
    expect(Object.keys((update?.inputSchema.properties ?? {}) as object)).toContain("if_match");
    const stale = await client.callTool({ name: "delete_automation", arguments: { automation: "etag mcp", if_match: tag0 } });
    expect(stale.isError).toBe(true);
    expect((stale.structuredContent as { error: string }).error).toBe("precondition_failed");
    expect((await s.call("GET", "/projects/tags/automations/etag%20mcp")).status).toBe(200);
  } finally {
    await client.close();
  }
});

test("schedules and alert channels carry an ETag and honour If-Match: a stale one is 412 and changes nothing", async () => {
  const schedule = await s.call("POST", "/projects/tags/schedules", { name: "etag schedule", target: { tags: ["x"] }, interval_seconds: 3600, enabled: false });
  expect(schedule.status).toBe(201);
  const scheduleTag = schedule.headers.get("etag") ?? "";
  expect(scheduleTag).toMatch(/^"/);
  expect((await s.call("GET", "/projects/tags/schedules/etag%20schedule")).headers.get("etag")).toBe(scheduleTag);
  const changed = await s.call("PATCH", "/projects/tags/schedules/etag%20schedule", { interval_seconds: 600 }, undefined, { "if-match": scheduleTag });
  expect(changed.status).toBe(200);
  expect(changed.headers.get("etag")).not.toBe(scheduleTag);
  const stale = await s.call("PATCH", "/projects/tags/schedules/etag%20schedule", { interval_seconds: 60 }, undefined, { "if-match": scheduleTag });
  expect(stale.status).toBe(412);
  expect(((await stale.json()) as { error: string }).error).toBe("precondition_failed");
  expect((await s.call("DELETE", "/projects/tags/schedules/etag%20schedule", undefined, undefined, { "if-match": scheduleTag })).status).toBe(412);
  expect(((await (await s.call("GET", "/projects/tags/schedules/etag%20schedule")).json()) as { interval_seconds: number }).interval_seconds).toBe(600);

  const channel = await s.call("POST", "/projects/tags/alert-channels", { name: "etag hook", kind: "slack", url: "https://hooks.example.test/x" });
  expect(channel.status).toBe(201);
  const channelTag = channel.headers.get("etag") ?? "";
  expect(channelTag).toMatch(/^"/);
  expect((await s.call("PATCH", "/projects/tags/alert-channels/etag%20hook", { remind_every: 3600 }, undefined, { "if-match": channelTag })).status).toBe(200);
  expect((await s.call("PATCH", "/projects/tags/alert-channels/etag%20hook", { remind_every: 60 }, undefined, { "if-match": channelTag })).status).toBe(412);
  expect((await s.call("DELETE", "/projects/tags/alert-channels/etag%20hook", undefined, undefined, { "if-match": channelTag })).status).toBe(412);
  expect((await s.call("GET", "/projects/tags/alert-channels/etag%20hook")).status).toBe(200);
  expect((await s.call("DELETE", "/projects/tags/alert-channels/etag%20hook")).status).toBe(204);
});
