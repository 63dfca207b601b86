// CLI start-up as whole-process medians: `svc --version`, `svc --help`, and `svc projects list` against a local
// `svc serve` started here as its own process (temp data directory, port 0, key from `svc admin create-key`).
// Usage: bun bench/cli-startup.ts [--binary dist/svc] [--runs 21]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runBinary, startServe } from "../test/helpers/binary";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : dflt;
};
const binary = resolve(opt("binary", `${import.meta.dir}/../dist/svc`));
const runs = Number(opt("runs", "21"));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timed(argv: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const proc = Bun.spawn([binary, ...argv], { env, stdout: "ignore", stderr: "pipe" });
  const code = await proc.exited;
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`svc ${argv.join(" ")} exited ${code}: ${await new Response(proc.stderr).text()}`);
  return ms;
}

const dataDir = mkdtempSync(join(tmpdir(), "svc-cli-bench-"));
const admin = ["--data-dir", dataDir];
await runBinary(["admin", "create-user", "--email", "bench@local.test", "--name", "bench", "--workspace", "bench", ...admin]);
const key = (await runBinary(["admin", "create-key", "--email", "bench@local.test", "--workspace", "bench", ...admin])).stdout.trim();
const server = await startServe([...admin], { env: { SVC_LOG_LEVEL: "error" } });
try {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/nonexistent", SVC_SERVER: server.url, SVC_API_KEY: key };
  await timed(["projects", "create", "Bench"], env);
  for (const [label, argv] of [
    ["svc --version", ["--version"]],
    ["svc --help", ["--help"]],
    ["svc projects list", ["projects", "list"]],
  ] as const) {
    await timed([...argv], env); // warm the page cache
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) xs.push(await timed([...argv], env));
    console.log(`${label.padEnd(20)} median ${median(xs).toFixed(1)} ms  (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}, n=${runs})`);
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
