// The command tree derived from the manifest: one command per operation, from its CLI words, args and fields.
import { writeFileSync } from "node:fs";
import { type Command, Option } from "commander";
import { z } from "zod";
import { operationFields } from "../src/client/schema-fields";
import { UsageError } from "./usage";
import { type Operation, operations } from "../src/manifest/index";
import { type FieldOption, optionFor, parseJsonArgument } from "./field-options";
import { jsonAsReceived, printable, renderJson, styleFor } from "./output";
import { readRequestFile } from "./request-file";
import type { ResolvedSettings } from "../src/client/settings";
import { clientFor, type CommonFlags, runCommand, settingsFor } from "./session";
import { ciMetadata } from "./ci-metadata";
import { parseWatchTimeout, prepareOutputFile, WATCH_TIMEOUT_FLAGS, WATCH_TIMEOUT_HELP, watchToEnd } from "./watch";

const PAST: Record<string, string> = { delete: "deleted", revoke: "revoked", remove: "removed", "cancel-invitation": "cancelled" };
/** What a command without an answer acted on, in the singular: `deleted automation …`, `cancelled invitation …`. */
const actedOn = (words: readonly string[]) => (words.at(-1) === "cancel-invitation" ? "invitation" : (words[0] ?? "").replace(/-/g, " ").replace(/s$/, ""));

/** Commands that start runs fill their metadata from the CI they run in. */
const takesCiMetadata = (op: Operation) => op.startsWork === true && operationFields(op).body.some((f) => f.name === "metadata");

/** The command for `words` under `root`, creating the intermediate groups. */
function commandAt(root: Command, words: string[]): Command {
  let parent = root;
  for (const w of words) {
    const existing = parent.commands.find((c) => c.name() === w);
    parent = existing ?? parent.command(w);
  }
  return parent;
}

interface Flags extends CommonFlags {
  file?: string;
  watch?: boolean;
  junit?: string;
  watchTimeout?: string;
  output?: string;
  out?: string;
  [attr: string]: unknown;
}

/** Where the server, key and project of a command come from, for the commands that show it. */
function settingSources(settings: ResolvedSettings): Record<string, string> {
  return {
    server: `${settings.server.value} (from ${settings.server.from})`,
    key_source: settings.key ? `${settings.key.source}: ${settings.key.from}` : "-",
    ...(settings.project ? { project: `${settings.project.value} (from ${settings.project.from})` } : {}),
  };
}

/** whoami's `assistant` in one line: "available", or why not. */
function withAssistantLine(me: object): object {
  const a = (me as { assistant?: { available?: boolean; problem?: string | null } } | null)?.assistant;
  if (typeof a !== "object" || a === null) return me;
  return { ...me, assistant: a.available ? "available" : `not available: ${a.problem ?? "no model"}` };
}

/** The fields of the record an operation answers (`show --json` prints them), for reading it back with --file. */
function recordFieldsOf(op: Operation): string[] {
  const r = op.response;
  return r !== null && !("raw" in r) && r instanceof z.ZodObject ? Object.keys(r.shape) : [];
}

async function invoke(op: Operation, options: FieldOption[], positional: string[], flags: Flags): Promise<number | undefined> {
  const fields = operationFields(op);
  const args = op.cli.args ?? [];
  const input: Record<string, unknown> = flags.file ? await readRequestFile(flags.file, fields.body, recordFieldsOf(op)) : {};
  for (const o of options) if (flags[o.attr] !== undefined) input[o.field.name] = flags[o.attr];
  if (takesCiMetadata(op) && flags.ciMetadata !== false) {
    // What the command line gives wins over what CI says.
    const given = typeof input.metadata === "object" && input.metadata !== null ? (input.metadata as Record<string, string>) : {};
    const merged = { ...ciMetadata(process.env), ...given };
    if (Object.keys(merged).length > 0) input.metadata = merged;
  }
  const byName = new Map(fields.body.map((f) => [f.name, f]));
  args.forEach((name, i) => {
    input[name] = byName.get(name)?.kind === "json" ? parseJsonArgument(positional[i] as string) : positional[i];
  });
  const settings = settingsFor(flags);
  const needsProject = fields.params.some((p) => p.name === "project") && !args.includes("project");
  if (needsProject) {
    if (!settings.project) throw new UsageError('no project: pass --project, set SVC_PROJECT, or add "project" to .svc.json');
    input.project = settings.project.value;
  }
  // A bad --watch-timeout, or a report or answer that could not be written, is refused before anything starts: a
  // usage error (exit 2) before the key is looked for, as the other mistakes in the command line are.
  parseWatchTimeout(flags.watchTimeout);
  if (flags.junit && op.cli.watch) prepareOutputFile(flags.junit, "the JUnit report");
  const outputFile = flags.output ?? flags.out;
  if (outputFile && op.response !== null && "raw" in op.response) prepareOutputFile(outputFile, "the answer");
  const client = clientFor(settings);
  // On a terminal, an operation that streams shows its words as they arrive (`delta` events), then its answer.
  let spoke = false;
  const live = op.stream !== undefined && !flags.json && !flags.watch && process.stdout.isTTY === true;
  const onEvent = (event: string, data: unknown) => {
    const text = (data as { text?: unknown } | null)?.text;
    if (event !== "delta" || typeof text !== "string") return;
    spoke = true;
    process.stdout.write(printable(text, true));
  };
  const res = await client.send(op, input, live ? { onEvent } : {});
  if (spoke) process.stdout.write("\n\n");
  const watchKind = op.cli.watch;
  if ((flags.watch || flags.junit || flags.watchTimeout !== undefined) && watchKind) {
    const target = { project: String(input.project), feature: typeof input.feature === "string" ? input.feature : undefined };
    return watchToEnd(client, watchKind, res.json as Record<string, unknown>, target, { json: flags.json, junit: flags.junit, timeout: flags.watchTimeout });
  }
  if (res.raw) {
    const output = flags.output ?? flags.out;
    if (output) {
      writeFileSync(output, res.raw.bytes);
      process.stderr.write(`wrote ${res.raw.bytes.length} bytes (${res.raw.contentType}) to ${output}\n`);
    } else if (process.stdout.isTTY && !/xml|json|text/.test(res.raw.contentType)) {
      throw new UsageError(`the answer is ${res.raw.contentType}; write it to a file with --output FILE`);
    } else {
      process.stdout.write(res.raw.bytes);
    }
    return;
  }
  if (res.json === null) {
    const verb = op.cli.words.at(-1) ?? "";
    if (!flags.json) process.stdout.write(`${PAST[verb] ?? "done:"} ${actedOn(op.cli.words)} ${args.map((a) => String(input[a])).join(" ")}\n`);
    return;
  }
  if (flags.json) {
    process.stdout.write(jsonAsReceived(res.text, res.json));
    return;
  }
  const shown = op.cli.showsSettings && typeof res.json === "object" ? { ...withAssistantLine(res.json), ...settingSources(settings) } : res.json;
  // What a list holds: `svc projects list` lists projects, `svc alert-channels deliveries` deliveries.
  const words = op.cli.words;
  const noun = words.length > 1 && words[words.length - 1] !== "list" ? words[words.length - 1] : words[0];
  process.stdout.write(`${renderJson(shown, noun ?? "records", styleFor(process.stdout))}\n`);
  return;
}

function register(root: Command, op: Operation): void {
  const fields = operationFields(op);
  const args = op.cli.args ?? [];
  const cmd = commandAt(root, op.cli.words).description(op.cli.summary ?? op.summary);
  const byName = new Map([...fields.params, ...fields.query, ...fields.body, ...fields.headers].map((f) => [f.name, f]));
  for (const a of args) {
    const f = byName.get(a);
    cmd.argument(`<${a}>`, f?.description ?? a.replace(/_/g, " "));
  }
  if (fields.params.some((p) => p.name === "project") && !args.includes("project")) {
    cmd.option("--project <project>", "project id or slug (default: SVC_PROJECT or .svc.json)");
  }
  const options: FieldOption[] = [];
  for (const f of [...fields.query, ...fields.body, ...fields.headers]) {
    if (args.includes(f.name)) continue;
    const made = optionFor(f, op.cli.flags?.[f.name]);
    cmd.addOption(made.option);
    if (made.negation) cmd.addOption(made.negation);
    options.push(made);
  }
  if (op.body) cmd.option("--file <path>", "the request body from a JSON or YAML file (- for stdin); flags override it");
  if (takesCiMetadata(op)) {
    cmd.option("--no-ci-metadata", "do not add commit, branch, build_url and pr from GitHub Actions, GitLab CI or Jenkins variables to metadata");
  }
  if (op.cli.watch) {
    cmd.option("--watch", "follow it to the end; exit 1 unless it passed");
    cmd.option(WATCH_TIMEOUT_FLAGS, WATCH_TIMEOUT_HELP);
  }
  if (op.cli.watch === "run" || op.cli.watch === "group_run") {
    cmd.option("--junit <file>", "follow it to the end (as --watch) and write its JUnit XML report to FILE, for the CI to read");
  }
  if (op.response !== null && "raw" in op.response) {
    cmd.option("-o, --output <file>", "write the answer to a file");
    // `svc export hurl X --out FILE` as the exporters are often written: the same as --output.
    cmd.addOption(new Option("--out <file>").hideHelp());
  }
  cmd.addOption(new Option("--json", "print the API's JSON exactly"));
  cmd.option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)");
  cmd.action(async (...received: unknown[]) => {
    const positional = received.slice(0, args.length).map(String);
    const flags = received[args.length] as Flags;
    await runCommand(() => invoke(op, options, positional, flags));
  });
}

/** Registers every operation of the manifest that a key may call. */
export function registerOperationCommands(root: Command): void {
  for (const op of operations) {
    if (op.sessionOnly) continue;
    register(root, op);
  }
}

/** Groups of commands (`automations`, `runs`, …) describe themselves by their subcommands. */
export function describeGroups(root: Command): void {
  for (const group of root.commands) {
    if (!group.description() && group.commands.length) group.description(`${group.name()}: ${group.commands.map((c) => c.name()).join(", ")}`);
  }
}
