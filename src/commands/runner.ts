// `svc runner --server URL`: a runner on this machine for a server elsewhere (token in SVC_RUNNER_TOKEN).
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Command } from "commander";
import { UsageError } from "../../cli/usage";
import { log } from "../logging";

/**
 * A browser path that was given but cannot be used leaves the runner without browser runs (it tells the server it
 * has no Chromium): said at start, naming the path and where it came from, rather than only by browser runs that
 * never come. Judged as the runner judges it (findChromium), so the warning and what it advertises agree.
 */
async function warnUnusableBrowserPath(path: string | undefined, from: string): Promise<void> {
  if (!path) return;
  const { findChromium } = await import("../runner/chromium");
  if ("path" in findChromium(path)) return;
  const why = existsSync(path) ? "is not an executable file" : "does not exist";
  log.warn(`the browser path ${path} ${why}: this runner takes no browser runs`, { browser_path: path, from });
}

function positiveInt(name: string, text: string, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new UsageError(`${name} must be a whole number from 1 to ${max}, not "${text}"`);
  return n;
}

export function registerRunner(program: Command): void {
  program
    .command("runner")
    .description("Execute runs claimed from a server over HTTP (token in SVC_RUNNER_TOKEN, made by svc admin create-runner-token or create_runner)")
    .requiredOption("--server <url>", "the server's address, e.g. https://svc.example.com")
    .option("--name <name>", "the runner's name, shown in the API, the web app, its runs and the logs (default: SVC_RUNNER_NAME, else the token's runner name)")
    .option("--labels <labels>", "comma-separated labels it offers besides its token's (default: SVC_RUNNER_LABELS)")
    .option("--concurrency <n>", "runs at once (default: SVC_RUNNER_CONCURRENCY, else 4)")
    .option("--workers <n>", "worker processes the runs execute in (default: SVC_RUNNER_WORKERS, else the CPU cores)")
    .option(
      "--browser-path <path>",
      "Chromium to run browser automations with (default: SVC_RUNNER_BROWSER_PATH, else Chromium's headless shell or chromium found on PATH)",
    )
    .option("--grace-ms <ms>", "after SIGTERM, how long running runs may finish before they are stopped", "10000")
    .option("--insecure-http", "allow plain http:// to a server that is not this machine (the token and secrets then travel unencrypted)")
    .action(
      async (o: {
        server: string;
        name?: string;
        labels?: string;
        concurrency?: string;
        workers?: string;
        browserPath?: string;
        graceMs: string;
        insecureHttp?: boolean;
      }) => {
        const env = process.env;
        // Signals are handled from the first moment: a stop that arrives while it is still starting ends it cleanly.
        let stopRunner: (() => void) | null = null;
        let signalled = false;
        const shutdown = (signal: string) => {
          if (signalled) return;
          signalled = true;
          process.stderr.write(`svc: ${signal} received, stopping the runner\n`);
          if (stopRunner) stopRunner();
          else process.exit(0);
        };
        process.on("SIGTERM", () => shutdown("SIGTERM"));
        process.on("SIGINT", () => shutdown("SIGINT"));
        const token = env.SVC_RUNNER_TOKEN ?? "";
        if (token.trim() === "") throw new UsageError("set SVC_RUNNER_TOKEN to the runner token (svc admin create-runner-token, or create_runner)");
        let url: URL;
        try {
          url = new URL(o.server);
        } catch {
          throw new UsageError(`--server "${o.server}" is not a URL like https://svc.example.com`);
        }
        const { isLoopbackHost, RemoteRunner, RunnerRefused } = await import("../runner/remote");
        if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
          if (!o.insecureHttp) {
            throw new UsageError(
              `--server ${url.origin} is plain http:// to another machine: the runner token and the runs' secrets would travel unencrypted; use https://, or add --insecure-http to accept that`,
            );
          }
          process.stderr.write(`svc: warning: --insecure-http: the runner token and the runs' secrets travel unencrypted to ${url.origin}\n`);
        } else if (url.protocol !== "http:" && url.protocol !== "https:") {
          throw new UsageError(`--server must be an http:// or https:// address, not ${url.protocol}`);
        }
        const { RunnerLabel } = await import("../manifest/define");
        const labels: string[] = [];
        for (const text of (o.labels ?? env.SVC_RUNNER_LABELS ?? "").split(",").filter((l) => l.trim() !== "")) {
          const label = RunnerLabel.safeParse(text);
          if (!label.success) throw new UsageError(`--labels: "${text}": ${label.error.issues[0]?.message ?? "invalid"}`);
          labels.push(label.data);
        }
        const concurrency = positiveInt("--concurrency", o.concurrency ?? env.SVC_RUNNER_CONCURRENCY ?? "4", 256);
        const workers = positiveInt("--workers", o.workers ?? env.SVC_RUNNER_WORKERS ?? String(availableParallelism()), 256);
        const graceMs = Number(o.graceMs);
        if (!Number.isInteger(graceMs) || graceMs < 0) throw new UsageError(`--grace-ms must be a whole number of milliseconds, not "${o.graceMs}"`);
        const browserPath = o.browserPath ?? env.SVC_RUNNER_BROWSER_PATH;
        await warnUnusableBrowserPath(browserPath, o.browserPath !== undefined ? "--browser-path" : "SVC_RUNNER_BROWSER_PATH");
        const runner = new RemoteRunner({
          server: url.origin + url.pathname.replace(/\/+$/, ""),
          token: token.trim(),
          name: o.name ?? env.SVC_RUNNER_NAME,
          labels,
          concurrency,
          workers,
          browserPath,
          graceMs,
        });
        const { flushLogs } = await import("../logging");
        stopRunner = () => {
          flushLogs();
          runner.stop();
        };
        if (signalled) stopRunner();
        try {
          await runner.connect();
          await runner.run();
        } catch (e) {
          if (e instanceof RunnerRefused) {
            flushLogs();
            if (e.exitCode === 0) process.exit(0);
            process.stderr.write(`svc: ${e.message}\n`);
            process.exit(e.exitCode);
          }
          throw e;
        }
        flushLogs();
        if (runner.refusal !== null) {
          process.stderr.write(`svc: ${runner.refusal}\n`);
          process.exit(runner.refusalExitCode);
        }
        process.exit(0);
      },
    );
}
