// The npm package: `npm pack`, then `npm install -g` of the tarball into a temporary prefix gives a working
// `svc` (the launcher runs the TypeScript entry on Bun), and says clearly when Bun is missing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../src/version";
import { tempDir } from "./helpers/server";

const ROOT = join(import.meta.dir, "..");
let work: string;
let svcBin: string;
let files: string[];

function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const p = Bun.spawnSync(cmd, { cwd: opts.cwd ?? work, env: { ...process.env, NODE_ENV: "", ...opts.env } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

beforeAll(() => {
  work = tempDir("svc-npm-");
  const pack = run(["npm", "pack", "--json", "--pack-destination", work], { cwd: ROOT });
  expect(pack.code).toBe(0);
  const packed = JSON.parse(pack.out) as { filename: string; files: { path: string }[] }[];
  files = packed[0]?.files.map((f) => f.path) ?? [];
  const tarball = join(work, packed[0]?.filename ?? "missing.tgz");
  const install = run(["npm", "install", "-g", "--prefix", join(work, "prefix"), tarball, "--no-audit", "--no-fund"]);
  if (install.code !== 0) throw new Error(`npm install -g failed: ${install.err}`);
  svcBin = join(work, "prefix", "bin", "svc");
}, 300_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("the package holds the launcher, the sources and the default config, and no tests or build output", () => {
  for (const f of ["bin/svc.mjs", "src/main.ts", "src/http/operations/index.ts", "config/svc.toml", "config/schema.ts", "package.json", "tsconfig.json"]) {
    expect(files).toContain(f);
  }
  expect(files.filter((f) => /\.test\.tsx?$/.test(f) || f.startsWith("test/") || f.startsWith("dist/") || f.startsWith("node_modules/"))).toEqual([]);
});

test("the globally installed svc prints its version and help", () => {
  const v = run([svcBin, "--version"]);
  expect(v.code).toBe(0);
  expect(v.out.trim()).toBe(VERSION);
  const help = run([svcBin, "--help"]);
  expect(help.code).toBe(0);
  expect(help.out).toContain("serve");
  expect(help.out).toContain("admin");
});

test("the globally installed svc administers a data directory and serves it", async () => {
  const data = join(work, "data");
  const user = run([svcBin, "admin", "create-user", "--email", "a@b.test", "--name", "A", "--workspace", "main", "--data-dir", data]);
  expect(user.err).toBe("");
  expect(user.code).toBe(0);
  const proc = Bun.spawn([svcBin, "serve", "--port", "0", "--data-dir", data], {
    cwd: work,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NODE_ENV: "" },
  });
  let err = "";
  const decoder = new TextDecoder();
  // Read stderr to the end: closing the pipe early would make svc's own shutdown message fail.
  const drained = (async () => {
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true });
  })();
  let url = "";
  for (let i = 0; i < 200 && !url; i++) {
    url = /svc listening on (\S+)/.exec(err)?.[1] ?? "";
    if (!url) await Bun.sleep(50);
  }
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  // SIGTERM to the launcher reaches svc, which drains and exits 0.
  proc.kill("SIGTERM");
  expect(await proc.exited).toBe(0);
  await drained;
  expect(err).toContain("SIGTERM received, draining");
  expect((await fetch(`${url}/healthz`).catch(() => null))?.status).toBeUndefined();
});

test("without Bun the launcher says how to get it", () => {
  const onlyNode = join(work, "only-node");
  mkdirSync(onlyNode, { recursive: true });
  symlinkSync(Bun.which("node") ?? "/usr/bin/node", join(onlyNode, "node"));
  const r = run([svcBin, "--version"], { env: { PATH: onlyNode } });
  expect(r.code).toBe(127);
  expect(r.err).toContain("npm install -g bun");
});
