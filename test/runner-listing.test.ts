// What an operator sees of runners: `svc runners list` shows each one's version and whether it runs browsers, and a
// runner started with a browser path it cannot use says so at start, naming the path (it then takes no browser runs).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../src/version";
import { sourceCli } from "./helpers/cli-source";
import { type RunnerProcess, startRunnerProcess } from "./helpers/remote-runner";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";

let s: TestServer;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
}, 60_000);
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop("SIGKILL")));
  await s.stop();
});

async function token(name: string): Promise<string> {
  return (await json<{ token: string }>(await s.call("POST", "/runners", { name, labels: [] }), 201)).token;
}

function runner(tok: string, args: string[], env: Record<string, string> = {}): RunnerProcess {
  const r = startRunnerProcess(s.url, tok, args, env);
  runners.push(r);
  return r;
}

/** The runner's JSON log lines with level warn. */
const warnings = (r: RunnerProcess) =>
  r
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { time: string; level: string; msg: string; browser_path?: string; from?: string })
    .filter((l) => l.level === "warn");

describe("a browser path the runner cannot use", () => {
  test("--browser-path that does not exist: a warning at start names it, and the runner advertises no browser", async () => {
    const r = runner(await token("no-such-browser"), ["--browser-path", "/nonexistent/chromium"]);
    expect(await r.waitFor("runner connected")).toBe(true);
    expect(warnings(r)).toContainEqual({
      time: expect.any(String),
      level: "warn",
      msg: "the browser path /nonexistent/chromium does not exist: this runner takes no browser runs",
      browser_path: "/nonexistent/chromium",
      from: "--browser-path",
    });
  }, 30_000);

  test("SVC_RUNNER_BROWSER_PATH naming a file that cannot run: the warning says so and where the path came from", async () => {
    const file = join(tempDir("svc-not-a-browser-"), "chromium");
    writeFileSync(file, "not a program\n");
    chmodSync(file, 0o644);
    const r = runner(await token("unrunnable-browser"), [], { SVC_RUNNER_BROWSER_PATH: file });
    expect(await r.waitFor("runner connected")).toBe(true);
    expect(warnings(r).map((w) => [w.msg, w.browser_path, w.from])).toContainEqual([
      `the browser path ${file} is not an executable file: this runner takes no browser runs`,
      file,
      "SVC_RUNNER_BROWSER_PATH",
    ]);
  }, 30_000);
});

describe("svc runners list", () => {
  test("shows each runner's version and whether it runs browsers (- for one that never connected)", async () => {
    const idle = await json<{ id: string }>(await s.call("POST", "/runners", { name: "never-connected", labels: [] }), 201);
    const cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key });
    try {
      const r = await cli.run(["runners", "list"]);
      expect(r.code).toBe(0);
      const lines = r.stdout.trimEnd().split("\n");
      expect(lines[0]?.split(/\s{2,}/)).toEqual(["ID", "NAME", "LABELS", "SCOPE", "VERSION", "BROWSER", "CONNECTED", "RUNNING", "LAST SEEN AT", "REVOKED AT"]);
      const row = (name: string) => lines.find((l) => l.split(/\s{2,}/)[1] === name)?.split(/\s{2,}/);
      // Started above with a browser path it cannot use: it said hello with its version and no browser.
      expect(row("no-such-browser")?.slice(1, 8)).toEqual(["no-such-browser", "-", "workspace", VERSION, "false", "true", "0"]);
      expect(row("never-connected")).toEqual([idle.id, "never-connected", "-", "workspace", "-", "-", "false", "0", "-", "-"]);
    } finally {
      cli.remove();
    }
  }, 30_000);
});
