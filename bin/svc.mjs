#!/usr/bin/env node
// The `svc` command of the npm package: runs svc's TypeScript entry with Bun, which svc needs (bun:sqlite,
// Bun.serve). Bun is taken from SVC_BUN, else PATH, else beside this package in the same global prefix.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const main = join(here, "..", "src", "main.ts");

function findBun() {
  if (process.env.SVC_BUN) return process.env.SVC_BUN;
  if (process.versions.bun) return process.execPath;
  // `npm install -g bun` next to `npm install -g svc`: <prefix>/lib/node_modules/svc/bin -> <prefix>/bin/bun.
  const sibling = join(here, "..", "..", "..", "..", "bin", "bun");
  return existsSync(sibling) ? sibling : "bun";
}

const child = spawn(findBun(), [main, ...process.argv.slice(2)], { stdio: "inherit" });
child.on("error", (e) => {
  if (e.code === "ENOENT") {
    process.stderr.write(
      "svc: the npm package runs on Bun (1.4 or later), which was not found.\n" +
        "     Install it with `npm install -g bun` (or see https://bun.sh), or use the single executable instead:\n" +
        "     curl -fsSL <your svc server>/install.sh | sh\n",
    );
    process.exit(127);
  }
  process.stderr.write(`svc: cannot start bun: ${e.message}\n`);
  process.exit(1);
});
// The terminal sends Ctrl-C to both processes; svc drains on it, so this launcher waits instead of dying first.
process.on("SIGINT", () => {});
process.on("SIGTERM", () => child.kill("SIGTERM"));
child.on("exit", (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
