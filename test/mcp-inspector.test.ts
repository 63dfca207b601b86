// The official MCP inspector CLI (through scripts/mcp-inspect.sh) lists and calls the tools of the compiled `svc mcp`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
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

async function inspect(args: string[]): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const proc = Bun.spawn([script, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", SVC_SERVER: s.url, SVC_API_KEY: s.key },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, json: out.trim() ? (JSON.parse(out) as Record<string, unknown>) : {}, stderr };
}

test("tools/list through the inspector has every operation and the two wait tools", async () => {
  const r = await inspect([]);
  expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
  const names = (r.json.tools as { name: string }[]).map((t) => t.name).sort();
  expect(names).toEqual([...operations.filter((o) => !o.sessionOnly).map((o) => o.name), "wait_for_generation", "wait_for_run"].sort());
}, 120_000);

test("tools/call through the inspector reads real data", async () => {
  const r = await inspect(["--method", "tools/call", "--tool-name", "list_projects"]);
  expect(r.code).toBe(0);
  const structured = r.json.structuredContent as { data: { slug: string }[] };
  expect(structured.data.map((p) => p.slug)).toEqual(["inspected"]);
}, 120_000);
