// The Dockerfile without a Docker engine: linted, and its steps run by scripts/docker-steps.sh (build stage
// for real, runtime stage in a throwaway root, then the container command probed with the HEALTHCHECK).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { tempDir } from "./helpers/server";

const ROOT = join(import.meta.dir, "..");
const LINT = join(ROOT, "node_modules", ".bin", "dockerfile-utils");

let work: string;
beforeAll(() => {
  work = tempDir("svc-docker-");
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("the Dockerfile passes the Dockerfile linter, which does flag a broken one", () => {
  const ok = Bun.spawnSync([LINT, "lint", join(ROOT, "Dockerfile")]);
  expect(ok.stdout.toString() + ok.stderr.toString()).toBe("");
  expect(ok.exitCode).toBe(0);
  const broken = join(work, "Dockerfile.broken");
  writeFileSync(broken, "FROM debian:bookworm-slim\nEXPOSE eighty\nHEALTHCHECK --interval=soon CMD true\n");
  const bad = Bun.spawnSync([LINT, "lint", broken]);
  expect(bad.stdout.toString() + bad.stderr.toString()).not.toBe("");
});

test("the image's environment makes svc listen on every interface of the container, data in the volume", () => {
  const env = /^ENV (.+)$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
  expect(env).not.toBeNull();
  const vars = Object.fromEntries((env?.[1] ?? "").split(" ").map((kv) => kv.split("=") as [string, string]));
  const config = loadConfig({ env: vars, flags: {} });
  expect(config.host).toBe("0.0.0.0");
  expect(config.port).toBe(8080);
  expect(config.data_dir).toBe("/var/lib/svc");
  expect(config.runner.browser_path).toBe("/usr/lib/chromium/chromium-headless-shell");
});

test("scripts/docker-steps.sh builds, starts the container command as a non-root user and passes the HEALTHCHECK, as a server and as a runner", () => {
  const r = Bun.spawnSync(["bash", join(ROOT, "scripts", "docker-steps.sh")], { env: { ...process.env, NODE_ENV: "" } });
  const out = r.stdout.toString();
  expect(r.stderr.toString()).not.toContain("docker-steps:");
  expect(r.exitCode).toBe(0);
  expect(out).toContain("== RUN bun install --frozen-lockfile");
  expect(out).toContain("== RUN bun run build && ./dist/svc --version");
  expect(out).toContain("== HEALTHCHECK against http://127.0.0.1:");
  expect(out).toMatch(/\nhealthy: http:\/\/127\.0\.0\.1:\d+\/healthz answers 200\n/);
  // The same image as a runner (`svc runner`, no port): its HEALTHCHECK checks the runner, not an API.
  expect(out).toMatch(/== HEALTHCHECK in the runner container: healthy: the runner \(pid \d+\) heard from http:\/\/127\.0\.0\.1:\d+ \d+ s ago\n/);
  expect(out).toContain("== ok: built, started from the image layout (a server, a runner), healthy, stopped cleanly");
}, 300_000);
