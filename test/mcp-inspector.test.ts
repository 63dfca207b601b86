// The official MCP inspector CLI (through scripts/mcp-inspect.sh) lists and calls the tools of the compiled `svc mcp`
// (stdio) and of /mcp on the server (streamable HTTP).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { toolsetOf } from "../mcp/toolsets";
import { operations } from "../src/manifest/index";
import { requireBinary } from "./helpers/binary";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const script = resolve(import.meta.dir, "../scripts/mcp-inspect.sh");

beforeAll(async () => {
  requireBinary();
  s = await startTestServer();
  expect((await s.call("POST", "/projects", { name: "Inspected" })).status).toBe(201);
});
afterAll(() => s.stop());

async function inspect(args: string[], env: Record<string, string> = {}): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const proc = Bun.spawn([script, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", SVC_SERVER: s.url, SVC_API_KEY: s.key, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, json: out.trim() ? (JSON.parse(out) as Record<string, unknown>) : {}, stderr };
}

const WAIT_TOOLS = ["wait_for_generation", "wait_for_group_run", "wait_for_run"];
const defaultTools = () => [...operations.filter((o) => !o.sessionOnly && toolsetOf(o) !== "admin").map((o) => o.name), ...WAIT_TOOLS].sort();

test("tools/list through the inspector has every operation (but the admin toolset) and the wait tools", async () => {
  const r = await inspect([]);
  expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
  const names = (r.json.tools as { name: string }[]).map((t) => t.name).sort();
  expect(names).toEqual(defaultTools());
}, 120_000);

test("over streamable HTTP at /mcp: tools/list (checked with --strict), the read-only toolsets, and a tools/call", async () => {
  const list = await inspect(["--http", "--method", "tools/list", "--strict"]);
  expect({ code: list.code, stderr: list.code === 0 ? "" : list.stderr }).toEqual({ code: 0, stderr: "" });
  expect((list.json.tools as { name: string }[]).map((t) => t.name).sort()).toEqual(defaultTools());
  const readOnly = await inspect(["--http", "--method", "tools/list"], { SVC_MCP_QUERY: "?read_only=true&toolsets=projects,runs" });
  expect(readOnly.code).toBe(0);
  const ro = readOnly.json.tools as { name: string; annotations: { readOnlyHint: boolean } }[];
  expect(ro.map((t) => t.name)).toContain("wait_for_run");
  expect(ro.every((t) => t.annotations.readOnlyHint)).toBe(true);
  const called = await inspect(["--http", "--method", "tools/call", "--tool-name", "list_projects"]);
  expect(called.code).toBe(0);
  expect((called.json.structuredContent as { data: { slug: string }[] }).data.map((p) => p.slug)).toEqual(["inspected"]);
}, 120_000);

test("tools/call through the inspector reads real data", async () => {
  const r = await inspect(["--method", "tools/call", "--tool-name", "list_projects"]);
  expect(r.code).toBe(0);
  const structured = r.json.structuredContent as { data: { slug: string }[] };
  expect(structured.data.map((p) => p.slug)).toEqual(["inspected"]);
}, 120_000);
