// The whole test suite: builds the executable (binary tests use it), runs `bun test` on SQLite, then the files
// scripts/backends.ts lists again on PostgreSQL (one throw-away cluster for the pass, test/helpers/postgres.ts), and
// prints the closing line "N passed, N failed" summed over both JUnit reports. `--sqlite-only` leaves the second
// pass out.
//
// Test files run in parallel processes (bun test --parallel), one per core: most of a test's time is spent waiting
// (for a server to start, a run to end, a browser), so the cores are kept busy. More processes than cores finish a
// little sooner but crowd the tests' own time budgets (a save seen within seconds) on a small machine. Each file
// still runs alone in its process, with its modules afresh. SVC_TEST_PARALLEL sets how many (1: one at a time).
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startSharedCluster } from "../test/helpers/postgres";
import { POSTGRES, QUIET, SQLITE_ONLY } from "./backends";

const extra = process.argv.slice(2);
mkdirSync("test-artifacts", { recursive: true });
for (const r of readdirSync("test-artifacts")) if (/^junit.*\.xml$/.test(r)) rmSync(join("test-artifacts", r));

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
if (!extra.includes("--no-lint")) {
  // Biome (biome.json): lint rules and the formatter; `bun x biome check --write .` fixes what it can.
  const lint = Bun.spawnSync(["bun", "x", "biome", "check", "."], { stdout: "inherit", stderr: "inherit" });
  if (lint.exitCode !== 0) {
    console.error("lint or format check failed: run `bun x biome check --write .`");
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}
// A server started as root runs its run workers as `nobody` (src/runner/worker-pool.ts), and from the source tree
// they load its modules: every test that runs something fails if `nobody` cannot read the checkout (a clone inside
// a private directory, such as one made by mktemp -d). Said here once, instead of as hundreds of failed runs.
if (process.getuid?.() === 0 && existsSync("/usr/bin/setpriv")) {
  const files = [join(process.cwd(), "src/runner/worker-main.ts"), join(process.cwd(), "node_modules/playwright-core/package.json")];
  const probe = Bun.spawnSync([
    "/usr/bin/setpriv",
    "--reuid=65534",
    "--regid=65534",
    "--clear-groups",
    "--",
    "/bin/sh",
    "-c",
    'test -r "$1" && test -r "$2"',
    "sh",
    ...files,
  ]);
  if (probe.exitCode !== 0) {
    const closed: string[] = [];
    for (let dir = process.cwd(); ; dir = dirname(dir)) {
      if ((statSync(dir).mode & 0o001) === 0) closed.push(dir);
      if (dir === dirname(dir)) break;
    }
    console.error(
      `the run workers of a server started as root run as nobody, who cannot read this checkout${closed.length > 0 ? `: ${closed.join(", ")} ${closed.length > 1 ? "are" : "is"} closed to other users (chmod o+x ${closed.join(" ")})` : " (make its files readable by other users)"}`,
    );
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}
const OWN_FLAGS = new Set(["--no-build", "--no-typecheck", "--no-lint", "--sqlite-only"]);
const args = extra.filter((a) => !OWN_FLAGS.has(a));
const processes = Number(process.env.SVC_TEST_PARALLEL ?? availableParallelism());
if (!Number.isInteger(processes) || processes < 1) {
  console.error(`SVC_TEST_PARALLEL must be a whole number of test processes, 1 or more (got ${process.env.SVC_TEST_PARALLEL})`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
// test/timings.json, each file's time in an earlier run, has the slowest files start first: none is left to run
// alone at the end. Refresh it now and then: bun test --parallel --timings=test/timings.json --update-timings
const parallel = processes > 1 ? [`--parallel=${processes}`, "--timings=test/timings.json"] : [];
// Everything the tests put in temp dirs (databases, browser profiles, copied binaries) lives under one directory
// that goes when the run ends. Like /tmp it is open to every user: some tests run commands as an unprivileged one.
const runTmp = mkdtempSync(join(tmpdir(), "svc-test-run-"));
chmodSync(runTmp, 0o1777);
const named = args.filter((a) => !a.startsWith("-"));
const flags = args.filter((a) => a.startsWith("-"));
/** The JUnit reports written, each with the label its failures get in the summary. */
const reports: [string, string][] = [];

/**
 * One pass over `files` (null: every test file bun test finds): in parallel processes, then, for the whole suite,
 * the files that assert wall-clock bounds (QUIET) one at a time. Answers the pass's exit code.
 */
async function runPass(name: string, label: string, files: string[] | null, env: Record<string, string>): Promise<number> {
  const quiet = named.length === 0 && parallel.length > 0 ? QUIET.filter((f) => files === null || files.includes(f)) : [];
  const parts: [string, string[], string[]][] = [
    [`test-artifacts/${name}.xml`, parallel, files === null ? quiet.map((f) => `--path-ignore-patterns=${f}`) : files.filter((f) => !quiet.includes(f))],
  ];
  if (quiet.length > 0) parts.push([`test-artifacts/${name}-quiet.xml`, [], quiet]);
  let code = 0;
  for (const [report, how, targets] of parts) {
    if (how.length === 0 && quiet.length > 0)
      console.log(`\n${label}the ${quiet.length} files that assert wall-clock bounds, one at a time (QUIET in scripts/backends.ts)`);
    const proc = Bun.spawn(["bun", "test", ...how, "--timeout", "120000", "--reporter=junit", `--reporter-outfile=${report}`, ...flags, ...targets], {
      stdout: "inherit",
      stderr: "inherit",
      env: { ...process.env, NODE_ENV: "test", TMPDIR: runTmp, ...env },
    });
    reports.push([report, label]);
    const exited = await proc.exited;
    if (exited !== 0 && code === 0) code = exited;
  }
  return code;
}

let code = await runPass("junit", "", named.length === 0 ? null : named, {});

// The second pass: the files that touch the store, on PostgreSQL. With file arguments, those of them on the list.
if (!extra.includes("--sqlite-only")) {
  const files = named.length === 0 ? POSTGRES : POSTGRES.filter((f) => named.some((n) => f.includes(n.replace(/^\.\//, ""))));
  if (files.length > 0) {
    console.log(
      `\nOn PostgreSQL: ${files.length} test files (scripts/backends.ts); SQLite only: ${Object.keys(SQLITE_ONLY).length} files, each with its reason there`,
    );
    const unlisted = unclassifiedStoreTests();
    if (unlisted.length > 0) console.log(`Not run on PostgreSQL, not yet in scripts/backends.ts: ${unlisted.join(", ")}`);
    let pgCode = 1;
    let cluster: Awaited<ReturnType<typeof startSharedCluster>> | null = null;
    try {
      cluster = await startSharedCluster();
      pgCode = await runPass("junit-postgres", "[postgres] ", files, { SVC_TEST_BACKEND: "postgres", SVC_TEST_POSTGRES_URL: cluster.adminUrl });
    } catch (e) {
      console.error(`the PostgreSQL pass could not start: ${(e as Error).message}`);
    } finally {
      cluster?.stop();
    }
    if (pgCode !== 0 && code === 0) code = pgCode;
  }
}
// The clusters of tests that start their own (clusterOfItsOwn) are stopped, and their directories removed, by a
// watcher once their test process has ended (test/helpers/postgres.ts): let it finish before the directory goes.
for (const until = Date.now() + 30_000; Date.now() < until && readdirSync(runTmp).some((f) => f.startsWith("svc-pg-")); ) await Bun.sleep(100);
try {
  rmSync(runTmp, { recursive: true, force: true });
} catch (e) {
  console.error(`could not remove ${runTmp}: ${(e as Error).message}`);
}

let passed = 0;
let failed = 0;
let skipped = 0;
const failures: string[] = [];
for (const [file, backend] of reports) {
  if (!existsSync(file)) continue;
  const xml = readFileSync(file, "utf8");
  for (const m of xml.matchAll(/<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const inner = m[3] ?? "";
    const failure = /<(failure|error)\b[^>]*>([\s\S]*?)<\/\1>|<(failure|error)\b[^>]*\/>/.exec(inner);
    if (failure) {
      failed++;
      failures.push(`  ${backend}${describeFailure(m[1] ?? "", failure[2] ?? "").trimStart()}`);
    } else if (/<skipped\b/.test(inner)) skipped++;
    else passed++;
  }
}
// The failures again at the end, where a CI log that keeps only its last lines still shows why.
if (failures.length > 0) {
  console.log(`\nFailures (${failures.length}):`);
  for (const f of failures.slice(0, 10)) console.log(f);
  if (failures.length > 10) console.log(`… and ${failures.length - 10} more, above`);
}
if (code !== 0 && failed === 0) failed = 1; // a crash or a failing file outside any test still fails the run
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code === 0 && failed === 0 ? 0 : 1);

function describeFailure(attributes: string, body: string): string {
  const attr = (name: string) => unescapeXml(new RegExp(`\\b${name}="([^"]*)"`).exec(attributes)?.[1] ?? "");
  const lines = unescapeXml(body)
    .split("\n")
    .filter((l) => l.trim() !== "");
  const shown = lines.slice(0, 25).map((l) => `    ${l.slice(0, 300)}`);
  if (lines.length > 25) shown.push(`    … ${lines.length - 25} more lines`);
  return [`  ${attr("file")}:${attr("line")} ${attr("name")}`, ...shown].join("\n");
}

function unescapeXml(s: string): string {
  return s.replace(/&(#\d+|#x[0-9a-f]+|lt|gt|quot|apos|amp);/gi, (_, e: string) => {
    if (e[0] === "#") return String.fromCodePoint(e[1] === "x" || e[1] === "X" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)));
    return ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" } as Record<string, string>)[e.toLowerCase()] ?? e;
  });
}

/** Test files that start a server or open a store but are in neither list of scripts/backends.ts. */
function unclassifiedStoreTests(): string[] {
  const listed = new Set([...POSTGRES, ...Object.keys(SQLITE_ONLY)]);
  return [...new Bun.Glob("test/*.test.ts").scanSync(".")]
    .filter((f) => !listed.has(f) && /startTestServer\(|openCore\(|openDatabase\(/.test(readFileSync(f, "utf8")))
    .sort();
}
