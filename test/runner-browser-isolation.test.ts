// Browser runs share one Chromium process per worker and each gets a fresh context: no cookie or localStorage
// crosses from one run to the next. Chromium's sandbox is turned off only when svc runs as root.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { findChromium, launchArgs } from "../src/runner/chromium";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { projectWithEnv, runToEnd } from "./helpers/runs";
import { waitUntil } from "./helpers/wait";

const HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell";

let s: TestServer;
let target: TargetApp;
let project: string;
/** Chromium processes this test process had started before this file (other test files run in it too). */
let earlier: Set<number>;

interface Proc {
  pid: number;
  args: string[];
}

/**
 * The Chromium browser processes started by this process's run workers: children of them running Chromium with
 * a user data dir (playwright-core gives every browser it launches its own). Its renderers and helpers are
 * children of the browser, so each browser counts once. Exited ones have no command line and drop out.
 */
function chromiumBrowsers(): Proc[] {
  const out: Proc[] = [];
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // "pid (comm) state ppid …": comm may contain spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parents.get(ppid) !== process.pid) continue;
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (/chrom/i.test(args[0] ?? "") && args.some((a) => a.startsWith("--user-data-dir="))) out.push({ pid: Number(entry), args });
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

const ours = () => chromiumBrowsers().filter((p) => !earlier.has(p.pid));

beforeAll(async () => {
  earlier = new Set(chromiumBrowsers().map((p) => p.pid));
  target = startTargetApp();
  // One worker process: one Chromium for the whole file.
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 3, workers: 1 } });
  ({ project } = await projectWithEnv(s, "browser isolation", { BASE_URL: target.url }));
});
afterAll(async () => {
  await s.stop();
  await target.stop();
});

const browser = (steps: unknown[]) => ({ name: `b-${crypto.randomUUID().slice(0, 8)}`, kind: "browser", environment: "test", steps });

describe("browser runs", () => {
  test("a run does not see the cookie or localStorage an earlier run set on the same site", async () => {
    const value = `v${crypto.randomUUID().slice(0, 8)}`;
    const a = await runToEnd(
      s,
      project,
      browser([
        { goto: `/session/set?v=${value}` },
        { wait_for: { text: "Session set" } },
        { goto: "/session/show" },
        // Within one run the cookie and the storage are there: what run B must not see is real.
        { expect: { text: `cookie: svc_test=${value}` } },
        { expect: { text: `storage: ${value}` } },
      ]),
    );
    expect(a.steps.filter((x) => x.status !== "passed").map((x) => `${x.name}: ${x.message}`)).toEqual([]);
    expect(a.status).toBe("passed");

    const b = await runToEnd(
      s,
      project,
      browser([{ goto: "/session/show" }, { expect: { text: "cookie: none" }, timeout_ms: 2000 }, { expect: { text: "storage: none" }, timeout_ms: 2000 }]),
    );
    expect(b.steps.filter((x) => x.status !== "passed").map((x) => `${x.name}: ${x.message}`)).toEqual([]);
    expect(b.status).toBe("passed");
    // What the site received: A's second page came with the cookie, B's without any.
    const shows = target.seen.filter((r) => r.path === "/session/show");
    expect(shows.map((r) => r.headers.cookie ?? "(none)")).toEqual([`svc_test=${value}`, "(none)"]);
  }, 60_000);

  test("runs one after another and at once all use one Chromium process, which stops with the server", async () => {
    const pass = [{ goto: "/items-page" }, { expect: { count: { locator: "testid=item", equals: 3 } } }];
    const seen: number[][] = [];
    const first = await runToEnd(s, project, browser(pass));
    expect(first.status).toBe("passed");
    seen.push(ours().map((p) => p.pid));
    const together = await Promise.all([1, 2, 3].map(() => runToEnd(s, project, browser(pass))));
    expect(together.map((r) => r.status)).toEqual(["passed", "passed", "passed"]);
    seen.push(ours().map((p) => p.pid));
    const last = await runToEnd(s, project, browser(pass));
    expect(last.status).toBe("passed");
    const browsers = ours();
    seen.push(browsers.map((p) => p.pid));
    // The earlier test's runs used the same process too: one browser for the whole file.
    expect(browsers.length).toBe(1);
    const pid = browsers[0]?.pid as number;
    expect(seen).toEqual([[pid], [pid], [pid]]);
    // The sandbox flag it was started with follows the rule under test below, for the uid the browser runs as (a
    // server started as root runs its workers, and so their browsers, as nobody: they keep Chromium's sandbox).
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    expect(browsers[0]?.args.includes("--no-sandbox")).toBe(uid === 0);
    // Without runner.browser_path it is Debian's headless shell (scripts/ensure-deps.sh installs it), started itself.
    expect(browsers[0]?.args[0]).toBe(HEADLESS_SHELL);
    if (process.getuid?.() === 0) expect(uid).not.toBe(0);

    // The server's shutdown closes the browser (a fresh server for the rest of the file's hooks).
    await s.stop();
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { workers: 1 } });
    // Once its worker is gone the browser is no longer below this process: look for the process itself.
    const running = (p: number) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").length > 0;
      } catch {
        return false;
      }
    };
    await waitUntil(() => ours().length === 0 && !running(pid), 15_000, 50);
    expect(ours()).toEqual([]);
    expect(running(pid)).toBe(false);
  }, 90_000);
});

describe("Chromium's sandbox", () => {
  test("is disabled (--no-sandbox) exactly when svc runs as root", () => {
    expect(launchArgs(0)).toContain("--no-sandbox");
    for (const uid of [1, 999, 1000, 65534]) expect(launchArgs(uid)).not.toContain("--no-sandbox");
    // Where there are no uids (Windows), the sandbox stays on.
    expect(launchArgs(null)).not.toContain("--no-sandbox");
    // Apart from the sandbox, root and others get the same flags.
    expect(launchArgs(0).filter((a) => a !== "--no-sandbox")).toEqual(launchArgs(1000));
  });

  test("follows this process's own uid by default", () => {
    expect(launchArgs()).toEqual(launchArgs(process.getuid?.() ?? null));
    expect(launchArgs().includes("--no-sandbox")).toBe(process.getuid?.() === 0);
  });
});

describe("which Chromium runs browser steps", () => {
  /** A directory holding stand-in executables (or, for `plain`, files that are not executable). */
  function dirWith(names: string[], plain: string[] = []): string {
    const dir = tempDir("svc-chromium-");
    for (const n of names) {
      writeFileSync(join(dir, n), "#!/bin/sh\n");
      chmodSync(join(dir, n), 0o755);
    }
    for (const n of plain) writeFileSync(join(dir, n), "");
    return dir;
  }

  test("the headless shell is preferred to the full browser wherever both are on PATH, then the rest in order", () => {
    const full = dirWith(["chromium", "google-chrome"]);
    const shell = dirWith(["chromium-headless-shell"]);
    try {
      // PATH order does not beat preference: the shell in a later directory still wins.
      expect(findChromium(undefined, { installed: [], path: `${full}:${shell}` })).toEqual({ path: join(shell, "chromium-headless-shell") });
      expect(findChromium(undefined, { installed: [], path: full })).toEqual({ path: join(full, "chromium") });
      // An installed path (Debian's shell binary itself) comes before PATH.
      const installed = join(shell, "chromium-headless-shell");
      expect(findChromium(undefined, { installed: ["/nonexistent/shell", installed], path: full })).toEqual({ path: installed });
    } finally {
      rmSync(full, { recursive: true, force: true });
      rmSync(shell, { recursive: true, force: true });
    }
  });

  test("a non-executable file or a directory of a candidate's name is passed over; none found says how to install one", () => {
    const dir = dirWith(["google-chrome"], ["chromium-headless-shell"]);
    mkdirSync(join(dir, "chromium"));
    try {
      expect(findChromium(undefined, { installed: [join(dir, "chromium")], path: dir })).toEqual({ path: join(dir, "google-chrome") });
      const none = findChromium(undefined, { installed: [], path: "/nonexistent" });
      expect("problem" in none && none.problem).toContain("no Chromium was found on PATH (looked for chromium-headless-shell, chromium,");
      expect("problem" in none && none.problem).toContain("apt-get install chromium-headless-shell");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("runner.browser_path wins over everything, and a wrong one is reported, not replaced", () => {
    const dir = dirWith(["chromium-headless-shell", "my-chrome"]);
    try {
      expect(findChromium(join(dir, "my-chrome"), { installed: [join(dir, "chromium-headless-shell")], path: dir })).toEqual({ path: join(dir, "my-chrome") });
      const wrong = findChromium(join(dir, "missing"), { installed: [join(dir, "chromium-headless-shell")], path: dir });
      expect("problem" in wrong && wrong.problem).toContain(`runner.browser_path is ${join(dir, "missing")}, which is not an executable file`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
