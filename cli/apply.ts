// `svc apply DIR` and `svc test DIR`: a project's automations, groups, environments, schedules and alert channels
// kept as files in a repository, made the project's or run as they are (and `svc pull DIR`, in pull.ts, registered here).
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { parse } from "yaml";
import { operationFields } from "../src/client/schema-fields";
import { ops } from "../src/manifest/index";
import { ciMetadata } from "./ci-metadata";
import { type FieldOption, optionFor } from "./field-options";
import { projectOf, readFolder } from "./folder";
import { parseWatchTimeout, prepareOutputFile, WATCH_TIMEOUT_FLAGS, WATCH_TIMEOUT_HELP, watchToEnd } from "./watch";
import { type PullFlags, pull } from "./pull";
import { clientFor, type CommonFlags, runCommand } from "./session";
import { UsageError } from "./usage";
import { printable } from "./output";

/** The values of the machine's environment variables that environment documents name for their secrets. */
function secretValues(documents: { text: string }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of documents) {
    let v: unknown;
    try {
      v = parse(d.text);
    } catch {
      continue; // the server names the file and line
    }
    if (!v || typeof v !== "object") continue;
    const doc = v as { type?: unknown; secrets?: unknown; secret_from?: unknown; url_from?: unknown };
    const names =
      doc.type === "environment" && doc.secrets && typeof doc.secrets === "object"
        ? Object.values(doc.secrets)
        : doc.type === "alert_channel"
          ? [doc.secret_from, doc.url_from]
          : [];
    for (const name of names) {
      if (typeof name === "string" && process.env[name] !== undefined) out[name] = process.env[name] as string;
    }
  }
  return out;
}

interface ApplyFlags extends CommonFlags {
  dryRun?: boolean;
  prune?: boolean;
  exitCode?: boolean;
  env?: string;
}

const SIGN = { create: "+", update: "~", delete: "-" } as const;

async function apply(dir: string, flags: ApplyFlags): Promise<number> {
  // Refused before anything is read or sent: without --dry-run the changes would be applied, and exit 0 would then
  // say "no drift" to a check that had just made the project match.
  if (flags.exitCode && !flags.dryRun) throw new UsageError("--exit-code goes with --dry-run: svc apply DIR --dry-run --exit-code");
  const documents = readFolder(dir);
  // Pointing at the wrong folder must never come to deleting every applied record (with --prune).
  if (documents.length === 0) throw new UsageError(`${dir} holds no .yaml, .yml or .json file: nothing to apply`);
  const { settings, project } = projectOf(flags);
  const client = clientFor(settings);
  const body = {
    project,
    documents,
    dry_run: flags.dryRun === true,
    prune: flags.prune === true,
    secrets: secretValues(documents),
    ...(flags.env ? { environment: flags.env } : {}),
  };
  const res = await client.send(ops.applyDocuments, body);
  const answer = res.json as { changes: { op: keyof typeof SIGN; type: string; key: string; name: string; fields: string[] }[]; summary: string };
  if (flags.json) process.stdout.write(`${JSON.stringify(res.json)}\n`);
  else {
    for (const c of answer.changes) {
      const line = `${SIGN[c.op]} ${c.op} ${c.type} ${c.key} (${c.name})${c.fields.length ? `: ${c.fields.join(", ")}` : ""}`;
      process.stdout.write(`${printable(line)}\n`);
    }
    process.stdout.write(`${flags.dryRun ? "plan: " : ""}${printable(answer.summary)}\n`);
  }
  // 1, not 2: a drift check tells "the project differs" from a folder that does not read (400, exit 2).
  return flags.dryRun && flags.exitCode && answer.changes.length > 0 ? 1 : 0;
}

interface TestFlags extends CommonFlags {
  junit?: string;
  watchTimeout?: string;
  ciMetadata?: boolean;
  [attr: string]: unknown;
}

/** `svc test DIR`: the folder's automations run on the server without being saved, followed to the end. */
async function testFolder(dir: string, options: FieldOption[], flags: TestFlags): Promise<number> {
  // A bad --watch-timeout, or a report that could not be written, is refused before anything starts: the group run
  // would otherwise go on on the server with its results lost.
  parseWatchTimeout(flags.watchTimeout);
  if (flags.junit) prepareOutputFile(flags.junit, "the JUnit report");
  const documents = readFolder(dir);
  if (documents.length === 0) throw new UsageError(`${dir} holds no .yaml, .yml or .json file: nothing to test`);
  const { settings, project } = projectOf(flags);
  const client = clientFor(settings);
  const input: Record<string, unknown> = { project, documents, name: `test ${basename(resolve(dir))}` };
  for (const o of options) if (flags[o.attr] !== undefined) input[o.field.name] = flags[o.attr];
  if (flags.ciMetadata !== false) {
    const merged = { ...ciMetadata(process.env), ...((input.metadata as Record<string, string> | undefined) ?? {}) };
    if (Object.keys(merged).length > 0) input.metadata = merged;
  }
  const res = await client.send(ops.testDocuments, input);
  return watchToEnd(
    client,
    "group_run",
    res.json as Record<string, unknown>,
    { project },
    { json: flags.json, junit: flags.junit, timeout: flags.watchTimeout },
  );
}

/** Replaces the commands derived from the `apply` and `test_documents` operations by ones that read a folder, and adds `svc pull`. */
export function registerApply(program: Command): void {
  for (const name of ["apply", "test"]) {
    const derived = program.commands.findIndex((c) => c.name() === name);
    if (derived >= 0) (program.commands as Command[]).splice(derived, 1);
  }
  program
    .command("apply")
    .description("Make the project match a folder of automation, group, environment, schedule and alert channel files (prints the plan)")
    .argument("<dir>", "the folder (*.yaml, *.yml, *.json; hidden folders skipped)")
    .option("--project <project>", "project id or slug (default: SVC_PROJECT or .svc.json)")
    .option("--dry-run", "print the plan only")
    .option("--exit-code", "with --dry-run: exit 1 when there are changes (0: none; an invalid folder is 2), for CI drift checks")
    .option("--prune", "delete applied records whose key no file in DIR has")
    .option("--env <environment>", "default environment of automations whose file names none")
    .option("--json", "print the API's JSON exactly")
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)")
    .action((dir: string, flags: ApplyFlags) => runCommand(() => apply(dir, flags)));
  program
    .command("pull")
    .description("Write the project's automations, groups, environments, schedules and alert channels (without secrets) as files svc apply takes back")
    .argument("<dir>", "the folder to write into")
    .option("--project <project>", "project id or slug (default: SVC_PROJECT or .svc.json)")
    .option("--json", "print the files written as JSON: each one's path and record (type, id, key, name), and the stale files left as they were")
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)")
    .action((dir: string, flags: PullFlags) => runCommand(() => pull(dir, flags)));
  const test = program
    .command("test")
    .description("Run a folder's automations on the server without saving them, as one group run (trigger test); exit 1 unless all passed")
    .argument("<dir>", "the folder (*.yaml, *.yml, *.json; hidden folders skipped), as svc apply reads it")
    .option("--project <project>", "project id or slug (default: SVC_PROJECT or .svc.json)");
  const flagOf: Record<string, string> = { environment: "env", variables: "var", secrets: "secret" };
  const options: FieldOption[] = [];
  for (const f of operationFields(ops.testDocuments).body) {
    if (f.name === "documents") continue;
    const made = optionFor(f, flagOf[f.name]);
    test.addOption(made.option);
    if (made.negation) test.addOption(made.negation);
    options.push(made);
  }
  test
    .option("--no-ci-metadata", "do not add commit, branch, build_url and pr from GitHub Actions, GitLab CI or Jenkins variables to metadata")
    .option("--watch", "follow the group run to its end (svc test always does: its exit code is the verdict)")
    .option("--junit <file>", "write the group run's JUnit XML report to FILE, for the CI to read")
    .option(WATCH_TIMEOUT_FLAGS, WATCH_TIMEOUT_HELP)
    .option("--json", "print the final group run's JSON exactly")
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)")
    .action((dir: string, flags: TestFlags) => runCommand(() => testFolder(dir, options, flags)));
}
