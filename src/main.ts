#!/usr/bin/env bun
// The one executable: `svc serve`, `svc mcp`, `svc admin …` and the CLI commands.
import { Command, CommanderError } from "commander";
import { registerMcp } from "../mcp/command";
import { registerAdmin } from "./commands/admin";
import { registerHealthcheck } from "./commands/healthcheck";
import { registerRunner } from "./commands/runner";
import { registerServe } from "./commands/serve";
import { switchValueHint, UsageError } from "../cli/usage";
import { VERSION } from "./version";
import { WORKER_COMMAND } from "./runner/worker-protocol";

export function buildProgram(): Command {
  const program = new Command("svc")
    .version(VERSION, "-V, --version")
    .description("svc: test management and test automation: the service, its administration, and its CLI")
    // Usage errors are one line on stderr (scripts and CI logs read it), pointing at --help instead of printing it.
    .configureOutput({
      outputError: (text, write) =>
        write(
          `svc: ${switchValueHint(text.trim().replace(/^error: /, ""), process.argv, (flag) => hasOption(program, `--no-${flag}`))} (add --help for usage)\n`,
        ),
    })
    .exitOverride();
  registerServe(program);
  registerAdmin(program);
  registerMcp(program);
  registerRunner(program);
  registerHealthcheck(program);
  return program;
}

/** Whether any command of the tree has that option. */
function hasOption(command: Command, long: string): boolean {
  return command.options.some((o) => o.long === long) || command.commands.some((c) => hasOption(c, long));
}

/** The CLI's command tree needs the whole manifest; `--version` and the service's own commands start faster without it. */
function needsClientCommands(argv: string[]): boolean {
  const first = argv[2];
  return !(
    first === "-V" ||
    first === "--version" ||
    first === "serve" ||
    first === "admin" ||
    first === "mcp" ||
    first === "runner" ||
    first === "healthcheck"
  );
}

async function main(): Promise<void> {
  // A run worker process of `svc serve` (the compiled executable starts its workers from itself).
  if (process.argv[2] === WORKER_COMMAND) {
    (await import("./runner/worker-main")).runWorker();
    return;
  }
  const program = buildProgram();
  if (needsClientCommands(process.argv)) (await import("../cli/index")).registerCli(program);
  try {
    await program.parseAsync(process.argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exit(e.exitCode === 0 ? 0 : 2);
    }
    const { ConfigError } = await import("../config/load");
    const { DatabaseOpenError } = await import("./db/database");
    if (e instanceof UsageError || e instanceof ConfigError) {
      process.stderr.write(`svc: ${e.message}\n`);
      process.exit(2);
    }
    if (e instanceof DatabaseOpenError) {
      process.stderr.write(`svc: ${e.message}\n`);
      process.exit(1);
    }
    const err = e as Error & { code?: string };
    if (err?.code === "EADDRINUSE" || /in use/i.test(err?.message ?? "")) {
      process.stderr.write(`svc: the port is already in use: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`svc: ${err?.message ?? String(e)}\n`);
    process.exit(1);
  }
}

if (import.meta.main) await main();
