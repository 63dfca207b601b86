// A server on HTTPS with a certificate from the team's own certificate authority, as a self-hosted svc often is:
// the compiled executable serves it, and the CLI and `svc runner` (the same executable) reach it. A machine that
// does not trust the authority is told so at once, with what fixes it (NODE_EXTRA_CA_CERTS), instead of retrying
// forever; once trusted, a runner executes a run whose secret travels over that TLS. Expired certificates and
// certificates for another name say so too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, type CommandResult, runBinary, type ServeProcess, startServe } from "./helpers/binary";
import { tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntilAsync } from "./helpers/wait";

const SECRET = "tls-carried-secret-5150";
let work: string;
let ca: string;
let s: ServeProcess;
let target: TargetApp;
let key: string;
let dataDir: string;

function openssl(args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd: work });
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr.toString()}`);
}

/** A leaf certificate for 127.0.0.1 signed by the test's authority, valid for `days` (negative: already expired). */
function leaf(name: string, days: number): { cert: string; key: string } {
  const keyFile = join(work, `${name}.key`);
  const csr = join(work, `${name}.csr`);
  const ext = join(work, `${name}.ext`);
  const cert = join(work, `${name}.crt`);
  writeFileSync(ext, "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
  openssl(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", keyFile, "-out", csr]);
  openssl(["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", join(work, "ca.key"), "-CAcreateserial", "-days", String(days), "-extfile", ext, "-out", cert]);
  return { cert, key: keyFile };
}

/** The API over HTTPS, trusting the authority (as a machine given NODE_EXTRA_CA_CERTS would). */
async function api<T>(method: string, path: string, body?: unknown, status = 200): Promise<T> {
  const res = await fetch(`${s.url}/api/v1/ops${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    tls: { ca: readFileSync(ca, "utf8") },
  });
  const text = await res.text();
  if (res.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

const cli = (args: string[], env: Record<string, string> = {}, server = s.url): Promise<CommandResult> =>
  runBinary(args, { cwd: work, env: { SVC_SERVER: server, SVC_API_KEY: key, ...env } });

beforeAll(async () => {
  work = tempDir("svc-tls-trust-");
  ca = join(work, "ca.crt");
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=svc test authority", "-keyout", join(work, "ca.key"), "-out", ca]);
  const server = leaf("server", 2);
  const config = join(work, "svc.toml");
  writeFileSync(config, `[tls]\ncert = "${server.cert}"\nkey = "${server.key}"\n`);
  dataDir = join(work, "data");
  target = startTargetApp();
  // The server executes nothing itself: a run that passes was executed by the runner.
  s = await startServe(["--config", config, "--data-dir", dataDir], { cwd: work, env: { SVC_RUNNER_LOCAL: "false" } });
  const admin = (args: string[]) => runBinary(["admin", ...args, "--config", config, "--data-dir", dataDir], { cwd: work });
  const user = await admin(["create-user", "--email", "tess@tls.test", "--name", "Tess", "--workspace", "tls"]);
  expect(user.code).toBe(0);
  const made = await admin(["create-key", "--email", "tess@tls.test", "--workspace", "tls"]);
  expect(made.code).toBe(0);
  key = made.stdout.trim();
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await target?.stop();
  rmSync(work, { recursive: true, force: true });
});

test("the CLI refuses a certificate from an authority it does not trust at once, says what fixes it, and works once given the authority", async () => {
  expect(s.url).toStartWith("https://127.0.0.1:");
  const refused = await cli(["projects", "list"]);
  expect(refused.code).toBe(6);
  expect(refused.stderr).toContain("does not trust");
  expect(refused.stderr).toContain("NODE_EXTRA_CA_CERTS");
  // Not retried: the certificate would be the same.
  expect(refused.stderr).not.toContain("retrying");
  expect(refused.stderr).not.toContain(key);

  const trusted = await cli(["projects", "list"], { NODE_EXTRA_CA_CERTS: ca });
  expect(trusted.stderr).toBe("");
  expect(trusted.code).toBe(0);
});

test("a certificate for another name, or one that expired, is named as such", async () => {
  // The server's certificate names 127.0.0.1, not localhost.
  const otherName = await cli(["projects", "list"], { NODE_EXTRA_CA_CERTS: ca }, s.url.replace("127.0.0.1", "localhost"));
  expect(otherName.code).toBe(6);
  expect(otherName.stderr).toContain("not issued for localhost");

  const old = leaf("expired", -1);
  const expired = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: readFileSync(old.cert, "utf8"), key: readFileSync(old.key, "utf8") },
    fetch: () => Response.json({ data: [] }),
  });
  try {
    const r = await cli(["projects", "list"], { NODE_EXTRA_CA_CERTS: ca }, `https://127.0.0.1:${expired.port}`);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("not valid now");
    expect(r.stderr).toContain("renew");
  } finally {
    await expired.stop(true);
  }
}, 30_000);

test("svc runner stops at once on an untrusted certificate; trusting the authority, it executes a run whose secret travels over TLS", async () => {
  const token = (await runBinary(["admin", "create-runner-token", "--name", "tls-box", "--data-dir", dataDir], { cwd: work })).stdout.trim();
  expect(token).toStartWith("svcr_");
  const runner = (env: Record<string, string>) =>
    Bun.spawn([BINARY, "runner", "--server", s.url, "--concurrency", "2"], {
      cwd: work,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, SVC_RUNNER_TOKEN: token, ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });

  const untrusting = runner({});
  const started = performance.now();
  const [code, err] = await Promise.all([untrusting.exited, new Response(untrusting.stderr).text()]);
  expect(code).toBe(6);
  // No retry loop: the first refusal ends it.
  expect(performance.now() - started).toBeLessThan(10_000);
  expect(err).toContain("does not trust");
  expect(err).toContain("NODE_EXTRA_CA_CERTS");
  expect(err).not.toContain("retrying");
  expect(err).not.toContain(token);

  await api("POST", "/projects", { name: "tls-shop" }, 201);
  await api("POST", "/projects/tls-shop/environments", { name: "test", variables: { BASE_URL: target.url }, secrets: { API_TOKEN: SECRET } }, 201);
  const automation = await api<{ id: string }>(
    "POST",
    "/projects/tls-shop/automations",
    {
      name: "over-tls",
      kind: "http",
      environment: "test",
      steps: [{ request: { url: "/items/1", headers: { authorization: "Bearer {{API_TOKEN}}" } }, expect: [{ status: 200 }] }],
    },
    201,
  );

  const trusting = runner({ NODE_EXTRA_CA_CERTS: ca });
  let out = "";
  void new Response(trusting.stderr).text().then((t) => {
    out = t;
  });
  try {
    const r = await cli(["automations", "run", automation.id, "--project", "tls-shop", "--watch", "--watch-timeout", "60", "--json"], {
      NODE_EXTRA_CA_CERTS: ca,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).status).toBe("passed");
    expect(target.seen.some((x) => x.path === "/items/1" && x.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    const runners = await api<{ data: { name: string; connected: boolean }[] }>("GET", "/runners");
    expect(runners.data.find((x) => x.name === "tls-box")?.connected).toBe(true);
  } finally {
    trusting.kill("SIGTERM");
    expect(await trusting.exited).toBe(0);
  }
  expect(await waitUntilAsync(async () => out !== "", 5_000)).toBe(true);
  expect(out).toContain("runner connected");
  expect(out).not.toContain(SECRET);
  expect(out).not.toContain(token);
}, 90_000);
