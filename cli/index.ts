// Registers the CLI on the `svc` root: commands derived from the manifest, plus login, watch and completion.
import type { Command } from "commander";
import { registerApply } from "./apply";
import { registerAuthCommands } from "./auth";
import { registerCompletion } from "./completion";
import { registerInit } from "./init";
import { describeGroups, registerOperationCommands } from "./operations";
import { EXIT_CODES_HELP } from "./session";
import { registerWatch } from "./watch";

export function registerCli(program: Command): void {
  registerAuthCommands(program);
  registerInit(program);
  registerOperationCommands(program);
  registerApply(program);
  const runs = program.commands.find((c) => c.name() === "runs");
  if (runs) registerWatch(runs, "run");
  const groupRuns = program.commands.find((c) => c.name() === "group-runs");
  if (groupRuns) registerWatch(groupRuns, "group run");
  describeGroups(program);
  registerCompletion(program);
  program.addHelpText(
    "after",
    `${EXIT_CODES_HELP}

Credentials: the key saved by \`svc login\` > SVC_API_KEY > api_key in $XDG_CONFIG_HOME/svc/config.json.
Server: --server > SVC_SERVER > .svc.json > the machine config. Project: --project > SVC_PROJECT > .svc.json.

Examples:
  $ svc login --server https://svc.example.com < key.txt
  $ svc automations run aut_123 --project shop --env staging --watch
  $ svc runs list --project shop --status failed --json | jq '.data[].id'`,
  );
}
