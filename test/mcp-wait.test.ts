// wait_for_run and wait_for_generation through `svc mcp`: the finished record, progress, and timed_out with a hint.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BINARY, requireBinary } from "./helpers/binary";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { silentableProxy } from "./helpers/silent-proxy";

// Each test spawns the compiled binary several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let client: Client;
let target: ReturnType<typeof Bun.serve>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/ok") return Response.json({ ok: true });
      if (path === "/slow") {
        await Bun.sleep(3500);
        return Response.json({ ok: true });
      }
      if (path === "/slow-page") {
        // The crawl generator reads this page: its generation stays running for a while.
        await Bun.sleep(2500);
        return new Response("<!doctype html><html><head><title>Slow page</title></head><body><h1>Slow</h1></body></html>", {
          headers: { "content-type": "text/html" },
        });
      }
      return Response.json({ ok: false }, { status: 500 });
    },
  });
  s = await startTestServer();
  const post = async (path: string, body: unknown) => (await (await s.call("POST", path, body)).json()) as { id: string };
  await post("/projects", { name: "Waits" });
  await post("/projects/waits/environments", { name: "local", variables: { BASE_URL: `http://127.0.0.1:${target.port}` } });
  for (const [name, url] of [
    ["ok", "/ok"],
    ["fail", "/fail"],
    ["slow", "/slow"],
  ] as const) {
    ids[name] = (
      await post("/projects/waits/automations", { name, kind: "http", environment: "local", steps: [{ request: { url }, expect: [{ status: 200 }] }] })
    ).id;
  }
  ids.feature = (
    await post("/projects/waits/features", {
      name: "Items",
      acceptance_criteria: 'Feature: Items\n  Scenario: item\n    When I send GET "/ok"\n    Then the response status should be 200\n',
    })
  ).id;
  requireBinary();
  const home = tempDir("svc-mcp-wait-");
  client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: BINARY,
      args: ["mcp", "--project", "waits"],
      env: { PATH: "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: `${home}/c`, SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stderr: "pipe",
    }),
  );
});
afterAll(async () => {
  await client.close();
  await s.stop();
  await target.stop(true);
});

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content: unknown };

async function startRun(automationId: string): Promise<string> {
  const r = (await client.callTool({ name: "run_automation", arguments: { automation: automationId } })) as Result;
  expect(r.isError).not.toBe(true);
  return String(r.structuredContent?.id);
}

test("wait_for_run returns the finished run: passed, and failed with its step results", async () => {
  const ok = (await client.callTool({ name: "wait_for_run", arguments: { run: await startRun(ids.ok ?? "") } })) as Result;
  expect(ok.structuredContent).toMatchObject({ timed_out: false, run: { status: "passed", trigger: "mcp" } });
  const failed = (await client.callTool({ name: "wait_for_run", arguments: { run: await startRun(ids.fail ?? "") } })) as Result;
  expect(failed.isError).not.toBe(true);
  expect(failed.structuredContent).toMatchObject({ timed_out: false, run: { status: "failed", summary: { failed: 1 } } });
  // Steps are numbered from 1 in every text, as "stopped at step N" and the CLI count them.
  const text = (r: Result) => (r.content as { type: string; text: string }[]).map((c) => c.text).join("\n");
  expect(text(failed)).toContain("step 1 GET");
  expect(text(failed)).not.toContain("#0");
  expect((ok.structuredContent?.run as { passed_steps: string[] }).passed_steps[0]).toMatch(/^step 1 GET /);
});

test("a short timeout returns the current run with timed_out and a hint; calling again gets the end; progress is sent", async () => {
  const runId = await startRun(ids.slow ?? "");
  const progress: { progress: number; message?: string }[] = [];
  const first = (await client.callTool({ name: "wait_for_run", arguments: { run: runId, timeout_seconds: 1 } }, undefined, {
    onprogress: (p) => progress.push(p),
  })) as Result;
  expect(first.structuredContent).toMatchObject({ timed_out: true, run: { id: runId }, hint: expect.stringContaining("wait_for_run again") });
  expect(["queued", "running"]).toContain((first.structuredContent?.run as { status: string }).status);
  expect(progress.length).toBeGreaterThanOrEqual(1);
  expect(progress[0]?.message).toMatch(/^run (queued|running)$/);
  const second = (await client.callTool({ name: "wait_for_run", arguments: { run: runId, timeout_seconds: 20 } })) as Result;
  expect(second.structuredContent).toMatchObject({ timed_out: false, run: { status: "passed" } });
});

test("a server that stops answering mid-wait: wait_for_run still ends about on time, timed out, with the run as last read", async () => {
  const proxy = silentableProxy(Number(new URL(s.url).port));
  const home = tempDir("svc-mcp-silent-");
  const through = new Client({ name: "svc-test", version: "1.0.0" });
  await through.connect(
    new StdioClientTransport({
      command: BINARY,
      args: ["mcp", "--project", "waits"],
      env: { PATH: "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: `${home}/c`, SVC_SERVER: `http://127.0.0.1:${proxy.port}`, SVC_API_KEY: s.key },
      stderr: "pipe",
    }),
  );
  try {
    const runId = await startRun(ids.slow ?? "");
    const started = performance.now();
    const waiting = through.callTool({ name: "wait_for_run", arguments: { run: runId, timeout_seconds: 3 } });
    // The first read is answered; the held one after it never is.
    await Bun.sleep(500);
    proxy.silent(true);
    const res = (await waiting) as Result;
    const ms = performance.now() - started;
    expect(res.structuredContent).toMatchObject({ timed_out: true, run: { id: runId }, hint: expect.stringContaining("wait_for_run again") });
    // Its 3 s and 2 s of grace for the read in flight, not the HTTP client's 30 s.
    expect(ms).toBeGreaterThan(2_900);
    expect(ms).toBeLessThan(7_000);
  } finally {
    proxy.stop();
    await through.close();
  }
});

test("timeout_seconds above 50 is refused; an unknown run is an isError not_found", async () => {
  const tooLong = (await client.callTool({ name: "wait_for_run", arguments: { run: "run_x", timeout_seconds: 120 } })) as Result;
  expect(tooLong.isError).toBe(true);
  const unknown = (await client.callTool({ name: "wait_for_run", arguments: { run: "run_doesnotexist" } })) as Result;
  expect(unknown).toMatchObject({ isError: true, structuredContent: { status: 404, error: "not_found" } });
});

test("wait_for_generation returns the finished generation", async () => {
  const started = (await client.callTool({ name: "start_generation", arguments: { feature: ids.feature, strategy: "gherkin" } })) as Result;
  expect(started.isError).not.toBe(true);
  const done = (await client.callTool({ name: "wait_for_generation", arguments: { feature: ids.feature, timeout_seconds: 30 } })) as Result;
  expect(done.structuredContent?.timed_out).toBe(false);
  const generation = done.structuredContent?.generation as { id: string; status: string; automation_ids: string[] };
  expect(generation.id).toBe(String(started.structuredContent?.id));
  expect(generation).toMatchObject({ status: "succeeded", automation_ids: [expect.stringMatching(/^aut_/)] });
});

test("wait_for_generation says why a generation failed, in its text as in its record", async () => {
  const feature = (await (await s.call("POST", "/projects/waits/features", { name: "Prose only", acceptance_criteria: "Users can see items." })).json()) as {
    id: string;
  };
  const started = (await client.callTool({ name: "start_generation", arguments: { feature: feature.id } })) as Result;
  expect(started.isError).not.toBe(true);
  const done = (await client.callTool({ name: "wait_for_generation", arguments: { feature: feature.id, timeout_seconds: 30 } })) as Result;
  const generation = done.structuredContent?.generation as { status: string; error: string };
  expect(generation.status).toBe("failed");
  expect(generation.error.length).toBeGreaterThan(10);
  expect((done.content as { text: string }[])[0]?.text).toContain(generation.error);
});

test("the wait tools advertise timeout_seconds with its default of 45 (at most 50), and do not require it", async () => {
  const { tools } = await client.listTools();
  for (const name of ["wait_for_run", "wait_for_generation", "wait_for_group_run"]) {
    const schema = tools.find((t) => t.name === name)?.inputSchema;
    expect({ name, timeout: schema?.properties?.timeout_seconds }).toEqual({
      name,
      timeout: expect.objectContaining({ type: "integer", default: 45, minimum: 1, maximum: 50 }),
    });
    expect(schema?.required ?? []).not.toContain("timeout_seconds");
  }
});

test("wait_for_generation without timeout_seconds follows a running generation to its end, with progress notifications", async () => {
  const feature = (await (
    await s.call("POST", "/projects/waits/features", { name: "Slow site", target: { kind: "web", url: `http://127.0.0.1:${target.port}/slow-page` } })
  ).json()) as { id: string };
  const started = (await client.callTool({ name: "start_generation", arguments: { feature: feature.id, strategy: "crawl" } })) as Result;
  expect(started.isError).not.toBe(true);
  const progress: { progress: number; message?: string }[] = [];
  const done = (await client.callTool({ name: "wait_for_generation", arguments: { feature: feature.id } }, undefined, {
    onprogress: (p) => progress.push(p),
  })) as Result;
  expect(done.structuredContent).toMatchObject({ timed_out: false, generation: { id: String(started.structuredContent?.id), status: "succeeded" } });
  // One notification per read, counted up from 1: the first read, at once, finds it running (the page takes 2.5 s);
  // the next is held by the server until the end. (The SDK's client handles notifications a microtask late and
  // drops those that arrive with the response, so the last read's notification is not asserted.)
  expect(progress.length).toBeGreaterThanOrEqual(1);
  expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
  for (const p of progress.slice(0, 1)) expect(p.message).toMatch(/^generation (queued|running)( \w+ \d+\/\d+)?$/);
  for (const p of progress) expect(p.message).toMatch(/^generation (queued|running|succeeded)( \w+ \d+\/\d+)?$/);
});
