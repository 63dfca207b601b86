// Registry-free CLI install: the script from GET /install.sh of a running compiled server downloads
// /download/svc, verifies it against /download/svc.sha256 and installs a working svc.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../src/version";
import { requireBinary, type ServeProcess, startServe } from "./helpers/binary";
import { tempDir } from "./helpers/server";

let work: string;
let s: ServeProcess;
beforeAll(async () => {
  requireBinary();
  work = tempDir("svc-cli-install-");
  // Homes inside are used by an unprivileged user when the tests run as root.
  chmodSync(work, 0o755);
  s = await startServe(["--data-dir", join(work, "data")], { cwd: work, env: { SVC_LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await s.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Runs `curl -fsSL URL/install.sh | sh` as a user would, in a fresh HOME. Without SVC_INSTALL_DIR it runs as
 * an unprivileged user when the tests run as root, so that the default is ~/.local/bin, never the host's
 * /usr/local/bin. Asynchronous, so that a proxy served by this process can answer meanwhile. */
async function installFrom(server: string, home: string, extraEnv: Record<string, string> = {}, path = process.env.PATH ?? "/usr/bin:/bin") {
  mkdirSync(home, { recursive: true });
  const asUser = process.getuid?.() === 0 && !extraEnv.SVC_INSTALL_DIR;
  if (asUser) Bun.spawnSync(["chown", "-R", "nobody:nogroup", home]);
  const script = `curl -fsSL '${server}/install.sh' | sh`;
  const cmd = asUser
    ? ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "bash", "-o", "pipefail", "-c", script]
    : ["bash", "-o", "pipefail", "-c", script];
  const p = Bun.spawn(cmd, { cwd: home, env: { PATH: path, HOME: home, ...extraEnv }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

const sha256 = (file: string) => new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");

test("the served script installs the running executable into ~/.local/bin and it runs", async () => {
  const home = join(work, "home-ok");
  const r = await installFrom(s.url, home);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  const installed = join(home, ".local", "bin", "svc");
  expect(r.out).toContain(`installed ${installed} (${VERSION})`);
  expect(r.out).toContain("add it to your PATH");
  expect(r.out).toContain(`svc login --server ${s.url}`);
  const v = Bun.spawnSync([installed, "--version"]);
  expect(v.stdout.toString().trim()).toBe(VERSION);
  // The checksum route agrees with the bytes installed, in sha256sum's format.
  const line = await (await fetch(`${s.url}/download/svc.sha256?os=linux&arch=x64`)).text();
  expect(line).toBe(`${sha256(installed)}  svc-linux-x64\n`);
  // And the bytes are the server's own executable.
  expect(sha256(installed)).toBe(sha256(`/proc/${s.proc.pid}/exe`));
});

test("SVC_INSTALL_DIR chooses the directory, and re-running replaces the executable in place", async () => {
  const dir = join(work, "custom-bin");
  expect((await installFrom(s.url, join(work, "home-custom"), { SVC_INSTALL_DIR: dir })).code).toBe(0);
  const again = await installFrom(s.url, join(work, "home-custom"), { SVC_INSTALL_DIR: dir });
  expect(again.code).toBe(0);
  expect(sha256(join(dir, "svc"))).toBe(sha256(`/proc/${s.proc.pid}/exe`));
  expect(existsSync(join(dir, ".svc.new"))).toBe(false);
});

test("a download damaged on the way is refused and nothing is installed", async () => {
  // A proxy in front of the server that flips one byte of the executable.
  const proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req, srv): Promise<Response> {
      const u = new URL(req.url);
      const upstream = await fetch(`${s.url}${u.pathname}${u.search}`);
      // The script names the server it came from; the proxy makes it name the proxy.
      if (u.pathname === "/install.sh") return new Response((await upstream.text()).replaceAll(s.url, srv.url.origin));
      if (u.pathname !== "/download/svc") return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers: upstream.headers });
      const bytes = new Uint8Array(await upstream.arrayBuffer());
      bytes[1000] = (bytes[1000] as number) ^ 0xff;
      return new Response(bytes, { status: 200 });
    },
  });
  try {
    const home = join(work, "home-damaged");
    const r = await installFrom(`http://127.0.0.1:${proxy.port}`, home);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`from http://127.0.0.1:${proxy.port}`);
    expect(r.err).toContain("checksum mismatch");
    expect(existsSync(join(home, ".local", "bin", "svc"))).toBe(false);
  } finally {
    proxy.stop(true);
  }
});

test("a platform the server has no build for fails with the server's explanation", async () => {
  // uname is the script's only view of the platform; a stand-in reports an Intel Mac.
  const fakeBin = join(work, "fake-uname");
  mkdirSync(fakeBin, { recursive: true });
  writeFileSync(join(fakeBin, "uname"), '#!/bin/sh\ncase "$1" in -s) echo Darwin ;; -m) echo x86_64 ;; *) echo Darwin ;; esac\n');
  chmodSync(join(fakeBin, "uname"), 0o755);
  const home = join(work, "home-mac");
  const r = await installFrom(s.url, home, {}, `${fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}`);
  expect(r.code).toBe(1);
  expect(r.err).toContain("answered 404");
  expect(r.err).toContain("no svc executable for darwin-x64");
  expect(existsSync(join(home, ".local", "bin", "svc"))).toBe(false);
});

test("the served script is shellcheck-clean POSIX sh", async () => {
  const file = join(work, "served-install.sh");
  writeFileSync(file, await (await fetch(`${s.url}/install.sh`)).text());
  const r = Bun.spawnSync(["shellcheck", "--shell=sh", file]);
  expect(r.stdout.toString()).toBe("");
  expect(r.exitCode).toBe(0);
});
