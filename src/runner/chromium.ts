// Finds the machine's Chromium and keeps one shared browser process; every browser run gets a fresh context.
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { Browser } from "playwright-core";
import { log } from "../logging";
import { StepFailure } from "./step-result";

const LAUNCH_TIMEOUT_MS = 30_000;
/** Shutdown does not wait longer than this for a browser that is still starting. */
const CLOSE_WAIT_MS = 3_000;

/**
 * Chromium's headless shell first: runs are always headless, and the shell (Debian's chromium-headless-shell, what
 * Playwright itself runs headless tests on) renders a goto-and-check run for about a sixth of the CPU of the full
 * browser in its headless mode, measured side by side with bench/runner.ts --browser. The full browser still works.
 */
const CANDIDATES = ["chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];
/** Debian's headless shell itself: its /usr/bin/chromium-headless-shell is a script that stays as the browser's parent. */
const INSTALLED = ["/usr/lib/chromium/chromium-headless-shell"];

const INSTALL_HINT =
  "install Chromium on the server (Debian/Ubuntu: apt-get install chromium-headless-shell, or chromium) or set runner.browser_path (SVC_RUNNER_BROWSER_PATH) to a Chromium or Chrome executable";

/** An existing executable file (a directory is "executable" too, for search). */
function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Where Chromium is looked for when runner.browser_path is not set (tests give their own). */
export interface ChromiumSearch {
  /** Absolute paths tried first. */
  installed: readonly string[];
  /** Directories searched for each of CANDIDATES in turn, like PATH. */
  path: string;
}

/**
 * The configured path, else the first of `installed` (Debian's headless shell), else the first of CANDIDATES
 * (in that order of preference) found in a directory of PATH.
 */
export function findChromium(
  configured: string | undefined,
  search: ChromiumSearch = { installed: INSTALLED, path: process.env.PATH ?? "" },
): { path: string } | { problem: string } {
  if (configured) {
    return executable(configured)
      ? { path: configured }
      : { problem: `runner.browser_path is ${configured}, which is not an executable file: ${INSTALL_HINT}` };
  }
  for (const p of search.installed) if (executable(p)) return { path: p };
  const dirs = search.path.split(delimiter).filter(Boolean);
  for (const name of CANDIDATES) {
    for (const dir of dirs) {
      const p = join(dir, name);
      if (executable(p)) return { path: p };
    }
  }
  return { problem: `no Chromium was found on PATH (looked for ${CANDIDATES.join(", ")}): ${INSTALL_HINT}` };
}

/**
 * Chromium's flags for the user `uid`: this process's by default; null where there are no uids (Windows).
 *
 * `--disable-site-isolation-trials`: every run has its own browser context, and Chromium never shares a renderer
 * process between contexts, so runs stay in separate processes either way. Within one run, site isolation only
 * split the member's own pages and frames into more processes: it started three renderers per goto-and-check run
 * instead of two (a spare one kept ready for the next site), and cost about a seventh of the browser's CPU.
 */
export function launchArgs(uid: number | null = process.getuid?.() ?? null): string[] {
  const args = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-site-isolation-trials",
  ];
  // Chromium refuses to start as root with its sandbox; elsewhere the sandbox stays on.
  if (uid === 0) args.unshift("--no-sandbox");
  return args;
}

export class SharedBrowser {
  private browser: Promise<Browser> | null = null;

  constructor(private readonly configuredPath: string | undefined) {}

  async get(): Promise<Browser> {
    if (!this.browser) {
      const pending = this.launch();
      this.browser = pending;
      pending.catch(() => {
        if (this.browser === pending) this.browser = null;
      });
    }
    return this.browser;
  }

  private async launch(): Promise<Browser> {
    const found = findChromium(this.configuredPath);
    if ("problem" in found) throw new StepFailure("error", `this is a browser automation and ${found.problem}`);
    const { chromium } = await import("playwright-core");
    try {
      const args = launchArgs();
      // playwright-core adds --no-sandbox unless chromiumSandbox is set: asked for whenever the flags keep it.
      const start = (a: string[]) =>
        chromium.launch({ executablePath: found.path, headless: true, args: a, chromiumSandbox: !a.includes("--no-sandbox"), timeout: LAUNCH_TIMEOUT_MS });
      // Where the machine cannot give it a sandbox (no user namespaces: some containers), it starts without one, as
      // it does for root, and the log says so; the run worker's own isolation (see /readyz) still holds.
      const browser = await start(args).catch((e: Error) => {
        if (args.includes("--no-sandbox")) throw e;
        log.warn("Chromium could not start with its sandbox here: started without it", { error: e.message.split("\n")[0] });
        return start(["--no-sandbox", ...args]);
      });
      log.info("browser started", { path: found.path });
      browser.on("disconnected", () => {
        this.browser = null;
      });
      return browser;
    } catch (e) {
      throw new StepFailure("error", `Chromium at ${found.path} could not start (${(e as Error).message.split("\n")[0]}): ${INSTALL_HINT}`);
    }
  }

  async close(): Promise<void> {
    const b = this.browser;
    this.browser = null;
    if (!b) return;
    const closing = b.then((x) => x.close()).catch(() => undefined);
    await Promise.race([closing, Bun.sleep(CLOSE_WAIT_MS)]);
  }
}
