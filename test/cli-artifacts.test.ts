// Artifacts of a real browser run (headless chromium): `svc runs artifact -o file` and the MCP image result.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BINARY } from "./helpers/binary";
import { type CliSandbox, cliSandbox } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";

// A browser run starts chromium: seconds on a busy machine.
setDefaultTimeout(90_000);

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
let s: TestServer;
let cli: CliSandbox;
let target: ReturnType<typeof Bun.serve>;
let run: { id: string; status: string; artifacts: string[] };

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response("<!doctype html><title>Home</title><h1>Welcome</h1>", { headers: { "content-type": "text/html" } }),
  });
  s = await startTestServer();
  cli = cliSandbox({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: "web" });
  expect((await s.call("POST", "/projects", { name: "Web" })).status).toBe(201);
  expect((await s.call("POST", "/projects/web/environments", { name: "local", variables: { BASE_URL: `http://127.0.0.1:${target.port}` } })).status).toBe(201);
  const aut = await (
    await s.call("POST", "/projects/web/automations", {
      name: "home page",
      kind: "browser",
      environment: "local",
      steps: [{ goto: "/" }, { expect: { text: "Welcome" } }, { screenshot: "home" }],
    })
  ).json();
  const r = await cli.run(["automations", "run", aut.id, "--watch", "--json"]);
  expect({ code: r.code, err: r.code === 0 ? "" : r.stderr + r.stdout }).toEqual({ code: 0, err: "" });
  run = JSON.parse(r.stdout);
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop(true);
});

test("runs show lists the artifacts; runs artifact -o writes the PNG", async () => {
  expect(run.status).toBe("passed");
  expect(run.artifacts.length).toBeGreaterThanOrEqual(1);
  const name = run.artifacts[0] ?? "";
  const shown = await cli.run(["runs", "show", run.id]);
  expect(shown.stdout).toMatch(new RegExp(`\\nartifacts +${run.artifacts.join(", ")}\\n`));
  const file = join(cli.root, "shot.png");
  const r = await cli.run(["runs", "artifact", run.id, name, "-o", file]);
  expect(r.code).toBe(0);
  expect(r.stderr).toContain("image/png");
  expect([...readFileSync(file).subarray(0, 4)]).toEqual(PNG_MAGIC);
});

test("get_run_artifact over MCP is an image result", async () => {
  const client = new Client({ name: "svc-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: BINARY,
      args: ["mcp", "--project", "web"],
      env: { PATH: "/usr/bin:/bin", HOME: cli.root, XDG_CONFIG_HOME: `${cli.root}/c`, SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stderr: "pipe",
    }),
  );
  try {
    const r = await client.callTool({ name: "get_run_artifact", arguments: { run: run.id, name: run.artifacts[0] } });
    const [content] = r.content as { type: string; data: string; mimeType: string }[];
    expect(content?.type).toBe("image");
    expect(content?.mimeType).toBe("image/png");
    expect([...Buffer.from(content?.data ?? "", "base64").subarray(0, 4)]).toEqual(PNG_MAGIC);
  } finally {
    await client.close();
  }
});
