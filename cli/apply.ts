// `svc apply DIR` and `svc pull DIR`: a project's automations, groups, environments, schedules and alert channels
// kept as files in a repository.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import type { Command } from "commander";
import { parse, stringify } from "yaml";
import { operationFields } from "../src/client/schema-fields";
import { hasControlCharacters } from "../src/manifest/define";
import { ops } from "../src/manifest/index";
import { ciMetadata } from "./ci-metadata";
import { type FieldOption, optionFor } from "./field-options";
import { parseWatchTimeout, WATCH_TIMEOUT_FLAGS, WATCH_TIMEOUT_HELP, watchToEnd } from "./watch";
import { clientFor, type CommonFlags, runCommand, settingsFor } from "./session";
import { UsageError } from "./usage";
import { printable } from "./output";

const DOCUMENT = /\.(ya?ml|json)$/i;

/** Every document below `dir` (hidden folders and node_modules skipped), by path relative to it with `/`. */
export function readFolder(dir: string): { path: string; text: string }[] {
  let top: ReturnType<typeof statSync>;
  try {
    top = statSync(dir);
  } catch {
    throw new UsageError(`${dir} does not exist`);
  }
  if (!top.isDirectory()) throw new UsageError(`${dir} is not a folder`);
  const out: { path: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const full = join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && DOCUMENT.test(e.name)) out.push({ path: relative(dir, full).split(sep).join("/"), text: readFileSync(full, "utf8") });
    }
  };
  walk(dir);
  return out;
}

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

function projectOf(flags: CommonFlags) {
  const settings = settingsFor(flags);
  if (!settings.project) throw new UsageError('no project: pass --project, set SVC_PROJECT, or add "project" to .svc.json');
  return { settings, project: settings.project.value };
}

async function apply(dir: string, flags: ApplyFlags): Promise<number> {
  const documents = readFolder(dir);
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

async function listAll(client: ReturnType<typeof clientFor>, op: (typeof ops)[keyof typeof ops], project: string) {
  const out: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const res = await client.send(op as typeof ops.listAutomations, { project, limit: 200, ...(cursor ? { cursor } : {}) });
    const page = res.json as { data: Record<string, unknown>[]; next_cursor: string | null };
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

const slug = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 80) || "unnamed";

/** The machine environment variable `svc pull` names for an alert channel's secret or Slack URL: ALERT_<NAME>_SECRET / _URL. */
const channelVariable = (name: string, what: "SECRET" | "URL") =>
  `ALERT_${name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")}_${what}`.replace(/__+/g, "_");

/**
 * A key that can be the file's own path (relative, inside the folder, a document's extension, and no control
 * character: a key stored before those were refused is written inside its file, named after the record).
 */
const keyIsPath = (key: string) =>
  DOCUMENT.test(key) && !hasControlCharacters(key) && !key.startsWith("/") && !key.split("/").some((p) => p === ".." || p === "" || p.startsWith("."));

async function pull(dir: string, flags: CommonFlags): Promise<number> {
  const { settings, project } = projectOf(flags);
  const client = clientFor(settings);
  const [auts, grps, envs, schs, chans] = await Promise.all([
    listAll(client, ops.listAutomations, project),
    listAll(client, ops.listGroups, project),
    listAll(client, ops.listEnvironments, project),
    listAll(client, ops.listSchedules, project),
    listAll(client, ops.listAlertChannels, project),
  ]);
  const used = new Set<string>();
  /** The file for a record: its key when that is a path, else `<folder>/<name>.yaml` (with `key:` kept inside). */
  const place = (key: string | null, folder: string, name: string) => {
    if (key && keyIsPath(key) && !used.has(key.toLowerCase())) {
      used.add(key.toLowerCase());
      return { path: key, keyField: undefined };
    }
    let path = `${folder}/${slug(name)}.yaml`;
    for (let i = 2; used.has(path.toLowerCase()); i++) path = `${folder}/${slug(name)}-${i}.yaml`;
    used.add(path.toLowerCase());
    return { path, keyField: key ?? undefined };
  };
  const files: { path: string; value: Record<string, unknown> }[] = [];
  const envName = new Map(envs.map((e) => [e.id as string, e.name as string]));
  for (const e of envs) {
    const { path, keyField } = place(e.key as string | null, "environments", e.name as string);
    const secrets = Object.fromEntries((e.secret_names as string[]).map((n) => [n, n]));
    files.push({
      path,
      value: {
        type: "environment",
        ...(keyField ? { key: keyField } : {}),
        name: e.name,
        // Written only when not the default, as apply reads an omitted one.
        ...(e.protected ? { protected: true } : {}),
        ...(e.allowed_hosts !== null ? { allowed_hosts: e.allowed_hosts } : {}),
        ...((e.runner_labels as string[]).length ? { runner_labels: e.runner_labels } : {}),
        variables: e.variables,
        ...(Object.keys(secrets).length ? { secrets } : {}),
      },
    });
  }
  const autKey = new Map<string, string>();
  for (const a of auts) {
    const { path, keyField } = place(a.key as string | null, "automations", a.name as string);
    autKey.set(a.id as string, keyField ?? path);
    const env = a.environment_id ? envName.get(a.environment_id as string) : undefined;
    files.push({
      path,
      value: {
        ...(keyField ? { key: keyField } : {}),
        // An automation not applied yet is adopted by its id on the next apply.
        ...(a.key === null ? { id: a.id } : {}),
        name: a.name,
        ...(a.description ? { description: a.description } : {}),
        kind: a.kind,
        ...(a.feature_id ? { feature: a.feature_id } : {}),
        ...(env ? { environment: env } : {}),
        ...((a.tags as string[]).length ? { tags: a.tags } : {}),
        status: a.status,
        ...(a.quarantined ? { quarantined: true } : {}),
        timeout_ms: a.timeout_ms,
        retries: a.retries,
        steps: a.steps,
      },
    });
  }
  const grpKey = new Map<string, string>();
  for (const g of grps) {
    const { path, keyField } = place(g.key as string | null, "groups", g.name as string);
    grpKey.set(g.id as string, keyField ?? path);
    const members = (g.automation_ids as string[]).map((id) => autKey.get(id)).filter((k): k is string => k !== undefined);
    files.push({
      path,
      value: {
        type: "group",
        ...(keyField ? { key: keyField } : {}),
        name: g.name,
        ...(g.description ? { description: g.description } : {}),
        ...(g.mode !== "parallel" ? { mode: g.mode } : {}),
        ...(g.stop_on_failure ? { stop_on_failure: true } : {}),
        automations: members,
      },
    });
  }
  for (const sc of schs) {
    const { path, keyField } = place(sc.key as string | null, "schedules", sc.name as string);
    const t = sc.target as { automation?: string; group?: string; tags?: string[] };
    // A target that is no longer there is written by its id (apply then says it names nothing).
    const target = t.automation
      ? { automation: autKey.get(t.automation) ?? t.automation }
      : t.group
        ? { group: grpKey.get(t.group) ?? t.group }
        : { tags: t.tags ?? [] };
    const env = sc.environment_id ? envName.get(sc.environment_id as string) : undefined;
    files.push({
      path,
      value: {
        type: "schedule",
        ...(keyField ? { key: keyField } : {}),
        name: sc.name,
        target,
        ...(env ? { environment: env } : {}),
        ...(sc.cron !== null ? { cron: sc.cron, timezone: sc.timezone } : { interval_seconds: sc.interval_seconds }),
        enabled: sc.enabled,
      },
    });
  }
  for (const c of chans) {
    const { path, keyField } = place(c.key as string | null, "alert-channels", c.name as string);
    const secret = c.kind === "slack" ? { url_from: channelVariable(c.name as string, "URL") } : c.url !== null ? { url: c.url } : {};
    files.push({
      path,
      value: {
        type: "alert_channel",
        ...(keyField ? { key: keyField } : {}),
        name: c.name,
        kind: c.kind,
        ...secret,
        ...(c.has_secret ? { secret_from: channelVariable(c.name as string, "SECRET") } : {}),
        ...(c.email_to !== null ? { email_to: c.email_to } : {}),
        events: c.events,
        ...(c.remind_every !== null ? { remind_every: c.remind_every } : {}),
      },
    });
  }
  for (const f of files) {
    const full = join(dir, ...f.path.split("/"));
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, /\.json$/i.test(f.path) ? `${JSON.stringify(f.value, null, 2)}\n` : stringify(f.value, { lineWidth: 0 }));
  }
  process.stdout.write(
    `wrote ${files.length} file(s) to ${dir}: ${auts.length} automation(s), ${grps.length} group(s), ${envs.length} environment(s), ${schs.length} schedule(s), ${chans.length} alert channel(s)\n`,
  );
  return 0;
}

interface TestFlags extends CommonFlags {
  junit?: string;
  watchTimeout?: string;
  ciMetadata?: boolean;
  [attr: string]: unknown;
}

/** `svc test DIR`: the folder's automations run on the server without being saved, followed to the end. */
async function testFolder(dir: string, options: FieldOption[], flags: TestFlags): Promise<number> {
  // A bad --watch-timeout is refused before anything starts.
  parseWatchTimeout(flags.watchTimeout);
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
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)")
    .action((dir: string, flags: CommonFlags) => runCommand(() => pull(dir, flags)));
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
