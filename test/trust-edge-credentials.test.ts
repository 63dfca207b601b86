// A key saved by `svc login` goes only to the server it was saved for. When --server, SVC_SERVER or a .svc.json
// names another server, the CLI and `svc mcp` send SVC_API_KEY or refuse with a message, never the saved key.
// The other server is a plain Bun.serve that records every Authorization header it receives.
import { afterAll, beforeAll, beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { normalServerUrl } from "../src/client/settings";
import { BINARY } from "./helpers/binary";
import { type CliSandbox, cliSandbox } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";

// Each test spawns the compiled binary several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: CliSandbox;
let other: ReturnType<typeof Bun.serve>;
let otherUrl: string;
/** The Authorization header of every request the other server received ("" when there was none). */
const received: string[] = [];
/** A key of the real server that is not the saved one: what SVC_API_KEY holds in these tests. */
let envKey: string;

beforeAll(async () => {
  s = await startTestServer();
  envKey = (await s.userWithKey("ci@acme.test", "acme", "member")).key;
  other = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      received.push(request.headers.get("authorization") ?? "");
      return Response.json({ error: "unauthorized", message: "not this server's key" }, { status: 401 });
    },
  });
  otherUrl = `http://127.0.0.1:${other.port}`;
});
beforeEach(async () => {
  cli?.remove();
  cli = cliSandbox();
  received.length = 0;
  const login = await cli.run(["login", "--server", s.url], { stdin: `${s.key}\n` });
  expect(login.code).toBe(0);
});
afterAll(async () => {
  cli.remove();
  await other.stop(true);
  await s.stop();
});

const put = (path: string, value: unknown) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(value));
};

/** The ways a command can be pointed at the other server. */
const pointers: [string, (extraEnv: Record<string, string>) => { args: string[]; env: Record<string, string> }][] = [
  ["SVC_SERVER", (env) => ({ args: [], env: { SVC_SERVER: otherUrl, ...env } })],
  ["--server", (env) => ({ args: ["--server", otherUrl], env })],
  [
    ".svc.json",
    (env) => {
      put(join(cli.cwd, ".svc.json"), { server: otherUrl });
      return { args: [], env };
    },
  ],
];

test.each(pointers)("with %s naming another server and no SVC_API_KEY, the CLI refuses and sends the saved key nowhere", async (_via, point) => {
  const { args, env } = point({});
  const r = await cli.run(["projects", "list", ...args], { env });
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(`the key saved by \`svc login\` is for ${s.url}, so it is not sent to ${otherUrl}`);
  expect(r.stderr).toContain("SVC_API_KEY");
  expect(received.filter((h) => h.includes(s.key))).toEqual([]);
});

test.each(pointers)("with %s naming another server, the CLI sends SVC_API_KEY there, never the saved key", async (_via, point) => {
  const { args, env } = point({ SVC_API_KEY: envKey });
  const r = await cli.run(["projects", "list", ...args], { env });
  expect(r.code).toBe(3);
  expect(received.length).toBeGreaterThan(0);
  expect(new Set(received)).toEqual(new Set([`Bearer ${envKey}`]));
});

test("the saved key still goes to its own server however its URL is spelled, ahead of SVC_API_KEY", async () => {
  const [scheme, rest] = s.url.split("://") as [string, string];
  for (const spelling of [s.url, `${s.url}/`, `${scheme.toUpperCase()}://${rest}//`]) {
    const me = await cli.json<{ user: { email: string } }>(["whoami"], { env: { SVC_SERVER: spelling, SVC_API_KEY: envKey } });
    expect({ spelling, email: me.user.email }).toEqual({ spelling, email: "owner@acme.test" });
  }
  const who = await cli.run(["whoami", "--server", otherUrl], { env: { SVC_API_KEY: envKey } });
  expect(who.code).toBe(3);
  expect(received).toEqual([`Bearer ${envKey}`]);
});

test("a key in the machine config goes only to the machine config's server", async () => {
  put(join(cli.configDir, "credentials.json"), {});
  put(join(cli.configDir, "config.json"), { server: s.url, api_key: s.key });
  expect((await cli.run(["projects", "list"])).code).toBe(0);
  const r = await cli.run(["projects", "list"], { env: { SVC_SERVER: otherUrl } });
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(`is for ${s.url}, so it is not sent to ${otherUrl}`);
  expect(received).toEqual([]);
});

async function mcpClient(env: Record<string, string>): Promise<Client> {
  const c = new Client({ name: "svc-test", version: "1.0.0" });
  await c.connect(
    new StdioClientTransport({ command: BINARY, args: ["mcp"], cwd: cli.cwd, env: { PATH: "/usr/bin:/bin", ...cli.env, ...env }, stderr: "pipe" }),
  );
  return c;
}

test("svc mcp pointed at another server sends SVC_API_KEY there, never the saved key", async () => {
  const c = await mcpClient({ SVC_SERVER: otherUrl, SVC_API_KEY: envKey });
  try {
    const result = await c.callTool({ name: "list_projects", arguments: {} });
    expect(result.isError).toBe(true);
  } finally {
    await c.close();
  }
  expect(received.length).toBeGreaterThan(0);
  expect(new Set(received)).toEqual(new Set([`Bearer ${envKey}`]));
});

test("svc mcp pointed at another server without SVC_API_KEY refuses to start, and says why", async () => {
  const proc = Bun.spawn([BINARY, "mcp"], {
    cwd: cli.cwd,
    env: { PATH: "/usr/bin:/bin", ...cli.env, SVC_SERVER: otherUrl },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  expect(code).toBe(3);
  expect(stderr).toContain(`the key saved by \`svc login\` is for ${s.url}, so it is not sent to ${otherUrl}`);
  expect(received).toEqual([]);
});

test("svc mcp with its own server uses the saved key", async () => {
  const c = await mcpClient({ SVC_SERVER: `${s.url}/` });
  try {
    const result = await c.callTool({ name: "whoami", arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.structuredContent)).toContain("owner@acme.test");
  } finally {
    await c.close();
  }
});

test.each([
  ["http://svc.example.com", "http://svc.example.com"],
  ["HTTPS://SVC.Example.com:443/", "https://svc.example.com"],
  ["http://svc.example.com:80//", "http://svc.example.com"],
  ["http://svc.example.com:8080", "http://svc.example.com:8080"],
  ["https://example.com/svc/", "https://example.com/svc"],
])("server URLs compare normalised: %s is %s", (url, normal) => {
  expect(normalServerUrl(url)).toBe(normal);
});
