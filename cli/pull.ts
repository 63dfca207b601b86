// `svc pull DIR`: a project's automations, groups, environments, schedules and alert channels written as files that
// svc apply takes back.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse, stringify } from "yaml";
import { hasControlCharacters } from "../src/manifest/define";
import { ops } from "../src/manifest/index";
import { DOCUMENT, projectOf, readFolder } from "./folder";
import { printable } from "./output";
import { clientFor, type CommonFlags } from "./session";

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

/** The kinds of document a folder holds, as pull writes them (`svc pull --json` names each file's). */
type DocumentType = "automation" | "group" | "environment" | "schedule" | "alert_channel";
const TYPED: readonly string[] = ["group", "environment", "schedule", "alert_channel"];

/** An svc document already in the folder pull writes into: its identity (its `key:`, else its path) and the id it adopts. */
interface ExistingDocument {
  path: string;
  type: DocumentType;
  key: string;
  id?: string;
}

/**
 * The svc documents the folder already holds (none when it does not exist yet): a file that does not read as one
 * (not YAML or JSON, or some other file) is not pull's business.
 */
function existingDocuments(dir: string): ExistingDocument[] {
  if (!existsSync(dir)) return [];
  const out: ExistingDocument[] = [];
  for (const d of readFolder(dir)) {
    let v: unknown;
    try {
      v = parse(d.text);
    } catch {
      continue;
    }
    if (!v || typeof v !== "object" || Array.isArray(v)) continue;
    const doc = v as Record<string, unknown>;
    const type =
      typeof doc.type === "string" && TYPED.includes(doc.type)
        ? (doc.type as DocumentType)
        : (doc.type === undefined || doc.type === "automation") && typeof doc.name === "string" && typeof doc.kind === "string"
          ? "automation"
          : undefined;
    if (!type) continue;
    const key = typeof doc.key === "string" && doc.key.trim() !== "" ? doc.key.trim() : d.path;
    out.push({ path: d.path, type, key, ...(typeof doc.id === "string" ? { id: doc.id } : {}) });
  }
  return out;
}

export interface PullFlags extends CommonFlags {
  json?: boolean;
}

export async function pull(dir: string, flags: PullFlags): Promise<number> {
  const { settings, project } = projectOf(flags);
  const client = clientFor(settings);
  const existing = existingDocuments(dir);
  const [auts, grps, envs, schs, chans] = await Promise.all([
    listAll(client, ops.listAutomations, project),
    listAll(client, ops.listGroups, project),
    listAll(client, ops.listEnvironments, project),
    listAll(client, ops.listSchedules, project),
    listAll(client, ops.listAlertChannels, project),
  ]);
  const used = new Set<string>();
  const byKey = new Map(existing.map((e) => [`${e.type} ${e.key}`, e.path]));
  const byId = new Map(existing.filter((e) => e.id !== undefined).map((e) => [`${e.type} ${e.id}`, e.path]));
  /**
   * The file for a record: the folder's file that already stands for it (by its key, or the id it adopts), else its
   * key when that is a path, else `<folder>/<name>.yaml`; `key:` is kept inside when the path is not the key.
   */
  const place = (type: DocumentType, r: Record<string, unknown>, folder: string) => {
    const key = r.key as string | null;
    const take = (path: string) => {
      used.add(path.toLowerCase());
      return { path, keyField: key !== null && key !== path ? key : undefined };
    };
    const standing = key !== null ? byKey.get(`${type} ${key}`) : byId.get(`${type} ${r.id as string}`);
    if (standing !== undefined && !used.has(standing.toLowerCase())) return take(standing);
    if (key && keyIsPath(key) && !used.has(key.toLowerCase())) return take(key);
    const name = slug(r.name as string);
    let path = `${folder}/${name}.yaml`;
    for (let i = 2; used.has(path.toLowerCase()); i++) path = `${folder}/${name}-${i}.yaml`;
    return take(path);
  };
  const files: { path: string; type: DocumentType; record: Record<string, unknown>; value: Record<string, unknown> }[] = [];
  const envName = new Map(envs.map((e) => [e.id as string, e.name as string]));
  for (const e of envs) {
    const { path, keyField } = place("environment", e, "environments");
    const secrets = Object.fromEntries((e.secret_names as string[]).map((n) => [n, n]));
    files.push({
      path,
      type: "environment",
      record: e,
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
    const { path, keyField } = place("automation", a, "automations");
    autKey.set(a.id as string, keyField ?? path);
    const env = a.environment_id ? envName.get(a.environment_id as string) : undefined;
    files.push({
      path,
      type: "automation",
      record: a,
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
    const { path, keyField } = place("group", g, "groups");
    grpKey.set(g.id as string, keyField ?? path);
    const members = (g.automation_ids as string[]).map((id) => autKey.get(id)).filter((k): k is string => k !== undefined);
    files.push({
      path,
      type: "group",
      record: g,
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
    const { path, keyField } = place("schedule", sc, "schedules");
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
      type: "schedule",
      record: sc,
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
    const { path, keyField } = place("alert_channel", c, "alert-channels");
    const secret = c.kind === "slack" ? { url_from: channelVariable(c.name as string, "URL") } : c.url !== null ? { url: c.url } : {};
    files.push({
      path,
      type: "alert_channel",
      record: c,
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
  // Files standing for records the project no longer has: left in place (one may be a document not applied yet), but
  // told, since the next apply would create their records again.
  const written = new Set(files.map((f) => f.path.toLowerCase()));
  const records = new Set(files.flatMap((f) => [`${f.type} ${f.record.id as string}`, ...(f.record.key ? [`${f.type} ${f.record.key as string}`] : [])]));
  const stale = existing.filter(
    (e) => !written.has(e.path.toLowerCase()) && !records.has(`${e.type} ${e.key}`) && !(e.id !== undefined && records.has(`${e.type} ${e.id}`)),
  );
  for (const e of stale)
    process.stderr.write(
      `svc: warning: ${printable(join(dir, e.path))} was left as it is: no ${e.type.replace("_", " ")} of the project has its key "${printable(e.key)}" (delete the file if its record was deleted; else the next svc apply creates it again)\n`,
    );
  if (flags.json) {
    const described = files.map((f) => ({ path: f.path, type: f.type, id: f.record.id, key: f.record.key ?? null, name: f.record.name }));
    process.stdout.write(`${JSON.stringify({ dir, files: described, stale: stale.map((e) => e.path) })}\n`);
  } else
    process.stdout.write(
      `wrote ${files.length} file(s) to ${dir}: ${auts.length} automation(s), ${grps.length} group(s), ${envs.length} environment(s), ${schs.length} schedule(s), ${chans.length} alert channel(s)\n`,
    );
  return 0;
}
