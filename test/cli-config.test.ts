// Credentials and defaults: login/logout, the key/server/project precedence, and .svc.json refusing keys.
import { afterAll, beforeAll, beforeEach, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type CliSandbox, cliSandbox } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";

// Each test spawns the compiled binary several times; on a busy machine that outgrows the 5 s default.
setDefaultTimeout(60_000);

let s: TestServer;
let cli: CliSandbox;
let dead: string;
let second: { key: string };

beforeAll(async () => {
  s = await startTestServer();
  second = await s.userWithKey("second@acme.test", "acme", "member");
  for (const name of ["Alpha", "Beta", "Gamma"]) {
    const slug = name.toLowerCase();
    expect((await s.call("POST", "/projects", { name })).status).toBe(201);
    expect((await s.call("POST", `/projects/${slug}/features`, { name: `in-${slug}` })).status).toBe(201);
  }
  const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  dead = `http://127.0.0.1:${closed.port}`;
  await closed.stop(true);
});
beforeEach(() => {
  cli?.remove();
  cli = cliSandbox();
});
afterAll(async () => {
  cli.remove();
  await s.stop();
});

const put = (path: string, value: unknown) => {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(value));
};

test("login reads the key from stdin, checks it, saves it 0600, and says where; logout removes it", async () => {
  const r = await cli.run(["login", "--server", s.url], { stdin: `${s.key}\n` });
  expect(r.code).toBe(0);
  const saved = join(cli.configDir, "credentials.json");
  expect(r.stdout).toContain(saved);
  expect(r.stdout).toContain("owner@acme.test");
  expect(r.stdout).not.toContain(s.key);
  expect(statSync(saved).mode & 0o777).toBe(0o600);
  expect(await Bun.file(saved).json()).toMatchObject({ server: s.url, key: s.key });
  // No --server and no SVC_* now: the saved login and machine config are enough.
  const who = await cli.run(["whoami"]);
  expect(who.code).toBe(0);
  expect(who.stdout).toContain(`key_source  login: ${saved}`);
  // Whether the server's assistant can answer, in one line (this server has no model).
  expect(who.stdout).toContain("assistant   not available: no model is configured for the assistant");
  expect(who.stdout).toContain(`server      ${s.url} (from ${join(cli.configDir, "config.json")})`);
  const out = await cli.run(["logout"]);
  expect({ code: out.code, out: out.stdout }).toEqual({ code: 0, out: `Removed the saved key ${saved}.\n` });
  expect(existsSync(saved)).toBe(false);
  expect((await cli.run(["whoami"])).code).toBe(3);
});

test("on a terminal, login asks with a hidden prompt: the key is never echoed", async () => {
  const binary = `${import.meta.dir}/../dist/svc`;
  const proc = Bun.spawn(["script", "-qec", `${binary} login --server ${s.url}`, "/dev/null"], {
    cwd: cli.cwd,
    env: { PATH: "/usr/bin:/bin", ...cli.env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  await Bun.sleep(800);
  proc.stdin.write(`${s.key}\r`);
  await proc.stdin.flush();
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(out).toContain("API key (input hidden): ");
  expect(out).toContain("Logged in to");
  expect(out).not.toContain(s.key);
  expect(await Bun.file(join(cli.configDir, "credentials.json")).json()).toMatchObject({ key: s.key });
});

test("login refuses a malformed key (exit 2) and an unknown one (exit 3), saving nothing", async () => {
  const bad = await cli.run(["login", "--server", s.url], { stdin: "not-a-key\n" });
  expect({ code: bad.code, err: bad.stderr }).toEqual({ code: 2, err: expect.stringContaining("not an API key") });
  const unknown = await cli.run(["login", "--server", s.url], { stdin: `svc_${"a".repeat(43)}\n` });
  expect(unknown.code).toBe(3);
  expect(existsSync(join(cli.configDir, "credentials.json"))).toBe(false);
});

test("key precedence: the saved login > SVC_API_KEY > api_key in the machine config", async () => {
  const email = async (env: Record<string, string> = {}) => {
    const me = await cli.json<{ user: { email: string } }>(["whoami"], { env: { SVC_SERVER: s.url, ...env } });
    return me.user.email;
  };
  // A key in the machine config belongs to the machine config's server.
  put(join(cli.configDir, "config.json"), { server: s.url, api_key: second.key });
  expect(await email()).toBe("second@acme.test");
  expect(await email({ SVC_API_KEY: s.key })).toBe("owner@acme.test");
  put(join(cli.configDir, "credentials.json"), { server: s.url, key: second.key });
  expect(await email({ SVC_API_KEY: s.key })).toBe("second@acme.test");
});

test("server precedence: --server > SVC_SERVER > .svc.json > machine config (the losers point nowhere)", async () => {
  const env = { SVC_API_KEY: s.key };
  const ok = async (args: string[], extra: Record<string, string> = {}) => (await cli.run(["projects", "list", ...args], { env: { ...env, ...extra } })).code;
  put(join(cli.configDir, "config.json"), { server: s.url });
  expect(await ok([])).toBe(0);
  put(join(cli.cwd, ".svc.json"), { server: dead });
  expect(await ok([])).toBe(6);
  put(join(cli.cwd, ".svc.json"), { server: s.url });
  put(join(cli.configDir, "config.json"), { server: dead });
  expect(await ok([])).toBe(0);
  expect(await ok([], { SVC_SERVER: dead })).toBe(6);
  put(join(cli.cwd, ".svc.json"), { server: dead });
  expect(await ok([], { SVC_SERVER: s.url })).toBe(0);
  expect(await ok(["--server", s.url], { SVC_SERVER: dead })).toBe(0);
});

test("project precedence: --project > SVC_PROJECT > .svc.json found by walking up", async () => {
  const env = { SVC_API_KEY: s.key, SVC_SERVER: s.url };
  const names = async (args: string[], extra: Record<string, string> = {}) =>
    (await cli.json<{ data: { name: string }[] }>(["features", "list", ...args], { env: { ...env, ...extra } })).data.map((f) => f.name);
  put(join(dirname(dirname(cli.cwd)), ".svc.json"), { project: "alpha" });
  expect(await names([])).toEqual(["in-alpha"]);
  expect(await names([], { SVC_PROJECT: "beta" })).toEqual(["in-beta"]);
  expect(await names(["--project", "gamma"], { SVC_PROJECT: "beta" })).toEqual(["in-gamma"]);
});

test.each([
  ["apiKey", { server: "http://127.0.0.1:1", apiKey: "anything" }, "apiKey"],
  ["api_key", { api_key: "x" }, "api_key"],
  ["token, nested", { auth: { token: "x" } }, "auth.token"],
  ["key", { project: "alpha", key: "x" }, "key"],
  ["a key-shaped value under any name", { project: "alpha", note: `svc_${"A".repeat(43)}` }, "note"],
])(".svc.json holding %s makes the CLI stop (exit 2) and say why", async (_name, content, field) => {
  put(join(cli.cwd, ".svc.json"), content);
  const r = await cli.run(["projects", "list"], { env: { SVC_API_KEY: s.key, SVC_SERVER: s.url } });
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
  expect(r.stderr).toContain(`key-like field (${field})`);
  expect(r.stderr).toContain("must never be in .svc.json");
  rmSync(join(cli.cwd, ".svc.json"));
});

test("under a .svc.json holding a key, commands that never read credentials or contact a server still run; the rest stop (exit 2)", async () => {
  put(join(cli.cwd, ".svc.json"), { project: "alpha", apiKey: s.key });
  const saved = join(cli.configDir, "credentials.json");
  put(saved, { server: s.url, key: s.key });
  // Refused (the server is reachable and the key valid, so exit 2 is the .svc.json): login, whoami, API commands.
  for (const args of [["whoami"], ["projects", "list"], ["login", "--server", s.url]]) {
    const r = await cli.run(args, { env: { SVC_SERVER: s.url }, stdin: `${s.key}\n` });
    expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
    expect(r.stderr).toContain("must never be in .svc.json");
  }
  // They run: logout removes the saved key (so a leaked key can always be cleaned up), completion prints its script.
  const out = await cli.run(["logout"]);
  expect({ code: out.code, out: out.stdout, err: out.stderr }).toEqual({ code: 0, out: `Removed the saved key ${saved}.\n`, err: "" });
  expect(existsSync(saved)).toBe(false);
  const completion = await cli.run(["completion", "bash"]);
  expect({ code: completion.code, err: completion.stderr }).toEqual({ code: 0, err: "" });
  expect(completion.stdout).toContain("complete -F _svc_complete svc");
  expect((await cli.run(["--version"])).code).toBe(0);
  rmSync(join(cli.cwd, ".svc.json"));
});

test("svc init writes .svc.json with the server and project (never a key), and the CLI then uses it", async () => {
  const file = join(cli.cwd, ".svc.json");
  const made = await cli.run(["init", "--server", `${s.url}/`, "--project", "beta"], { env: { SVC_API_KEY: s.key } });
  expect(made.code).toBe(0);
  expect(made.stderr).toContain("never from this file");
  const { readFileSync } = await import("node:fs");
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ server: s.url, project: "beta" });
  const listed = await cli.json<{ data: { name: string }[] }>(["features", "list"], { env: { SVC_API_KEY: s.key } });
  expect(listed.data.map((f) => f.name)).toEqual(["in-beta"]);

  const again = await cli.run(["init", "--server", s.url]);
  expect(again.code).toBe(2);
  expect(again.stderr).toContain("exists already; pass --force");
  expect((await cli.run(["init", "--server", s.url, "--project", "gamma", "--force"])).code).toBe(0);
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ server: s.url, project: "gamma" });

  for (const bad of ["not a url", "ftp://svc.example.com", "https://user:secret@svc.example.com"]) {
    const r = await cli.run(["init", "--server", bad, "--force"]);
    expect({ bad, code: r.code }).toEqual({ bad, code: 2 });
  }
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ server: s.url, project: "gamma" });
});
