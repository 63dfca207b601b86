// The whole test suite: builds the executable (binary tests use it), runs `bun test` and prints the
// closing line "N passed, N failed" from its JUnit report.
import { mkdirSync, readFileSync, existsSync, rmSync } from "node:fs";

const extra = process.argv.slice(2);
mkdirSync("test-artifacts", { recursive: true });
const report = "test-artifacts/junit.xml";
if (existsSync(report)) rmSync(report);

if (!extra.includes("--no-build")) {
  const build = Bun.spawnSync(["bun", "run", "scripts/build.ts"], { stdout: "inherit", stderr: "inherit" });
  if (build.exitCode !== 0) {
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}
if (!extra.includes("--no-typecheck")) {
  const tsc = Bun.spawnSync(["bun", "x", "tsc", "--noEmit", "-p", "."], { stdout: "inherit", stderr: "inherit" });
  if (tsc.exitCode !== 0) {
    console.error("type check failed");
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}
const args = extra.filter((a) => a !== "--no-build" && a !== "--no-typecheck");
const proc = Bun.spawn(["bun", "test", "--timeout", "120000", "--reporter=junit", `--reporter-outfile=${report}`, ...args], {
  stdout: "inherit",
  stderr: "inherit",
  env: { ...process.env, NODE_ENV: "test" },
});
const code = await proc.exited;

let passed = 0;
let failed = 0;
let skipped = 0;
if (existsSync(report)) {
  const xml = readFileSync(report, "utf8");
  for (const m of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const inner = m[2] ?? "";
    if (/<(failure|error)\b/.test(inner)) failed++;
    else if (/<skipped\b/.test(inner)) skipped++;
    else passed++;
  }
}
if (code !== 0 && failed === 0) failed = 1; // a crash or a failing file outside any test still fails the run
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code === 0 && failed === 0 ? 0 : 1);
