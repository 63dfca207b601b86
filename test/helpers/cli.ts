// A sandbox for running the compiled CLI: its own HOME, XDG config dir and working directory, no inherited SVC_*.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type CommandResult, runBinary } from "./binary";
import { tempDir } from "./server";

export interface CliSandbox {
  root: string;
  /** The working directory commands run in (a .svc.json may be put here). */
  cwd: string;
  /** $XDG_CONFIG_HOME/svc: where credentials.json and config.json live. */
  configDir: string;
  env: Record<string, string>;
  run(args: string[], opts?: { env?: Record<string, string>; stdin?: string; cwd?: string }): Promise<CommandResult>;
  /** Runs and parses stdout as JSON, failing with the output when the exit code is not 0. */
  json<T = Record<string, unknown>>(args: string[], opts?: { env?: Record<string, string> }): Promise<T>;
  remove(): void;
}

export function cliSandbox(base: Record<string, string> = {}): CliSandbox {
  const root = tempDir("svc-cli-");
  const cwd = join(root, "work", "repo");
  mkdirSync(cwd, { recursive: true });
  const env = { HOME: root, XDG_CONFIG_HOME: join(root, "config"), ...base };
  const sandbox: CliSandbox = {
    root,
    cwd,
    configDir: join(root, "config", "svc"),
    env,
    run: (args, opts = {}) => runBinary(args, { cwd: opts.cwd ?? cwd, env: { ...env, ...opts.env }, stdin: opts.stdin }),
    async json<T>(args: string[], opts: { env?: Record<string, string> } = {}): Promise<T> {
      const r = await sandbox.run([...args, "--json"], opts);
      if (r.code !== 0) throw new Error(`svc ${args.join(" ")} exited ${r.code}: ${r.stderr}${r.stdout}`);
      return JSON.parse(r.stdout) as T;
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
  return sandbox;
}
