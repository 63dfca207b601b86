// The CLI's per-command facts come from the manifest: every operation a key may call is a derived command
// (whoami included), which commands follow their work with --watch (and --junit), and which fields take a flag
// named other than the field.
import { expect, test } from "bun:test";
import { Command } from "commander";
import { registerCli } from "../cli/index";
import { registerOperationCommands } from "../cli/operations";
import { operations } from "../src/manifest";
import type { Operation } from "../src/manifest/define";

function commandFor(op: Operation): Command {
  const program = new Command("svc");
  registerCli(program);
  let cmd: Command | undefined = program;
  for (const word of op.cli.words) cmd = cmd?.commands.find((c) => c.name() === word);
  if (!cmd) throw new Error(`no command for ${op.name}`);
  return cmd;
}

const longFlags = (cmd: Command) => cmd.options.map((o) => o.long);
const byKey = (ops: Operation[]) => ops.map((o) => o.name).sort();

test("every operation a key may call gets its command from the manifest alone, whoami included", () => {
  const derived = new Command("svc");
  registerOperationCommands(derived);
  for (const op of operations.filter((o) => !o.sessionOnly)) {
    let cmd: Command | undefined = derived;
    for (const word of op.cli.words) cmd = cmd?.commands.find((c) => c.name() === word);
    expect({ op: op.name, description: cmd?.description() }).toEqual({ op: op.name, description: op.cli.summary ?? op.summary });
  }
  expect(operations.filter((o) => o.cli.showsSettings).map((o) => o.name)).toEqual(["whoami"]);
});

test("exactly the operations the manifest declares watchable get --watch, and runs and group runs --junit", () => {
  const watchable = operations.filter((o) => o.cli.watch);
  expect(byKey(watchable)).toEqual(["run_automation", "run_feature", "run_group", "run_selection", "start_generation", "test_documents"]);
  expect(Object.fromEntries(watchable.map((o) => [o.name, o.cli.watch]))).toEqual({
    run_automation: "run",
    run_feature: "group_run",
    run_group: "group_run",
    run_selection: "group_run",
    start_generation: "generation",
    test_documents: "group_run",
  });
  for (const op of operations.filter((o) => !o.sessionOnly)) {
    const flags = longFlags(commandFor(op));
    expect({ op: op.name, watch: flags.includes("--watch") }).toEqual({ op: op.name, watch: op.cli.watch !== undefined });
    expect({ op: op.name, junit: flags.includes("--junit") }).toEqual({ op: op.name, junit: op.cli.watch === "run" || op.cli.watch === "group_run" });
  }
});

test("a run's environment is --env on the commands whose manifest entry renames it, and nowhere else", () => {
  const renaming = operations.filter((o) => o.cli.flags?.environment === "env");
  // export_hurl and export_playwright write an environment's variables in: their environment is --env like a run's.
  expect(byKey(renaming)).toEqual(["export_hurl", "export_playwright", "run_automation", "run_feature", "run_group", "run_selection", "test_documents"]);
  for (const op of renaming) {
    expect(longFlags(commandFor(op))).toContain("--env");
    expect(longFlags(commandFor(op))).not.toContain("--environment");
  }
});
