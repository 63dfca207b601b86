// `svc apply`: the plan that makes a project match a folder of documents, applied in one transaction.
import { nextStamp } from "../versions";
import type { Kysely, Selectable } from "kysely";
import type { AlertChannelTable, AutomationTable, DB, EnvironmentTable, GroupTable, ScheduleTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import type { ApplyChange } from "../../manifest/apply";
import { AppError, type ErrorDetail, forbidden, invalid } from "../../manifest/errors";
import type { z } from "zod";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { startOnce } from "../idempotency";
import { StringList, StringMap } from "../shared/columns";
import { readJsonColumn, readJsonColumnOr } from "../shared/json";
import { nowIso } from "../shared/time";
import { resolveProject } from "../scope";
import { cancelRunsWhere, tellRunsCancelled } from "../runs/operations";
import { SECRET_MIN_CHARS, SECRET_TOO_SHORT } from "../../manifest/define";
import { openSecrets, sealSecrets } from "../environments/secrets";
import * as automations from "../automations/store";
import * as environments from "../environments/store";
import * as features from "../features/store";
import * as groups from "../groups/store";
import * as schedules from "../schedules/store";
import * as alerts from "../alerts/store";
import { checkTiming, firstDue, StoredTarget } from "../schedules/operations";
import { assertMayManageChannels, checkChannel, secretPlace, uniqueEvents } from "../alerts/operations";
import { openChannelUrl, storedChannelUrl } from "../alerts/channel-url";
import { assertMayRunIn } from "../environments/protection";
import { allowedHostsText, assertMayChangeEnvironment, runnerLabelsText } from "../environments/operations";
import { type Parsed, problemAt, type Unread } from "./documents";
import { readAllDocuments } from "../../reader-thread";
import * as store from "./store";

type O = typeof ops;
type Change = z.infer<typeof ApplyChange>;
type AutRow = Selectable<AutomationTable>;
type GrpRow = Selectable<GroupTable>;
type EnvRow = Selectable<EnvironmentTable>;
type SchRow = Selectable<ScheduleTable>;
type ChanRow = Selectable<AlertChannelTable>;
type Of<T extends Parsed["type"]> = Extract<Parsed, { type: T }>;

/** The same JSON whatever order an object's keys were written in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

function changedFields<T extends Record<string, unknown>>(current: T, next: Partial<T>): string[] {
  return Object.keys(next).filter((k) => canonical(current[k]) !== canonical(next[k]));
}

interface Plan {
  changes: Change[];
  /**
   * The writes, run in order inside the transaction, after the deletes: a file moved to another path (a new key)
   * creates its record while prune deletes the old one of the same name.
   */
  writes: ((db: Kysely<DB>) => Promise<unknown>)[];
  deletes: ((db: Kysely<DB>) => Promise<unknown>)[];
  /** The runs the deletes cancelled: told once the transaction has committed. */
  cancelled: string[];
}

export const applyDocuments: Handler<O["applyDocuments"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  // An empty folder is the wrong folder: pruning to it must never delete every applied record.
  if (body.prune && body.documents.length === 0)
    throw invalid("no documents: pruning to none would delete every applied record of the project", [
      { path: "body.documents", message: "no documents to apply (prune deletes only records whose key some other document of the folder no longer has)" },
    ]);
  // Documents with problems of their own do not stop the others from being checked against each other and the
  // project: every problem is told at once.
  const read = await readAllDocuments(body.documents, body.environment, ctx.principal.workspaceId);
  let cancelled: string[] = [];
  const { answer } = await startOnce(ctx, async (trx) => {
    const plan = await planFolder(ctx, trx, project.id, read, { secretValues: body.secrets, prune: body.prune, checkOnly: false });
    // Where alerts go is set by owners and admins, by the API or by a folder.
    if (plan.changes.some((c) => c.type === "alert_channel")) assertMayManageChannels(ctx);
    if (!body.dry_run) for (const w of [...plan.deletes, ...plan.writes]) await w(trx);
    cancelled = plan.cancelled;
    const count = (op: Change["op"]) => plan.changes.filter((c) => c.op === op).length;
    const summary = plan.changes.length === 0 ? "no changes" : `${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete`;
    return { dry_run: body.dry_run, changes: plan.changes, summary };
  });
  // The runs of deleted automations stop once the deletion is committed.
  tellRunsCancelled(ctx.core, cancelled);
  // Told once committed, so the scheduler reads the new due times.
  if (!body.dry_run && answer.changes.some((c) => c.type === "schedule")) ctx.core.events.emit("schedulesChanged");
  return answer;
};

/** How a folder is planned: to apply it (svc apply), or only to check that it would apply (svc test). */
export interface PlanOptions {
  /** The values of the machine's variables the documents name for their secrets. */
  secretValues: Record<string, string>;
  prune: boolean;
  /**
   * Only checking the folder, for svc test: secrets' values are not sent, so not checked; who may write what is not
   * asked, as nothing is written; and the folder is taken as the whole of the applied records, as `svc apply --prune`
   * (the apply CI runs) takes it: a record whose file has moved frees its name.
   */
  checkOnly: boolean;
}

/** What reading the folder came to: the documents read, and the others' problems and what they say of themselves. */
export interface FolderRead {
  parsed: Parsed[];
  problems: ErrorDetail[];
  message: string;
  unread: Unread[];
}

/** The plan for the folder, or one 400 naming every problem of its documents, by file and line. */
export async function planFolder(ctx: OpContext, db: Kysely<DB>, projectId: string, read: FolderRead, options: PlanOptions): Promise<Plan> {
  try {
    return await makePlan(ctx, db, projectId, read.parsed, options, read);
  } catch (e) {
    // A refusal of another kind (a 403) waits until the documents themselves are right.
    if (read.problems.length > 0 && !(e instanceof AppError && e.code === "invalid_request")) throw invalid(read.message, read.problems);
    throw e;
  }
}

/**
 * The applied record a document stands for: the one with its key; else, for a document whose `key:` no record has,
 * the one applied from its path while it had no key (giving an applied file a key keeps its record, with its id,
 * history and health; from then on the key is its identity), unless a document of the folder has that path for key.
 */
function appliedRecord<R>(keyed: Map<string, R>, d: Parsed, folderKeys: Set<string>): R | undefined {
  return keyed.get(d.key) ?? (d.key !== d.path && !folderKeys.has(d.path) ? keyed.get(d.path) : undefined);
}

/**
 * A reference by key that is the path of a file given another key: say that key, as the reference no longer names it.
 * One written as the file's name without its extension (`health` for health.yaml) or as the record's name, which
 * fits one document of the folder: say that document's key.
 */
function keyHint(docs: Parsed[], type: Parsed["type"], ref: string): string {
  const file = docs.find((d) => d.type === type && d.path === ref && d.key !== ref);
  if (file) return ` (the file ${ref} has the key "${file.key}": name it by its key)`;
  const loose = ref.toLowerCase();
  const stem = (path: string) => path.replace(/\.(ya?ml|json)$/i, "").toLowerCase();
  const meant = docs.filter(
    (d) =>
      d.type === type &&
      (stem(d.path) === loose || stem(d.path.split("/").pop() ?? "") === loose || String((d.body as { name?: unknown }).name).toLowerCase() === loose),
  );
  const [one] = meant;
  return one && meant.length === 1 ? ` (did you mean "${one.key}"? A document's key is its path in the folder, unless it has a key: field)` : "";
}

async function makePlan(
  ctx: OpContext,
  db: Kysely<DB>,
  projectId: string,
  docs: Parsed[],
  { secretValues, prune, checkOnly }: PlanOptions,
  earlier: { problems: ErrorDetail[]; unread: Unread[] },
): Promise<Plan> {
  const plan: Plan = { changes: [], writes: [], deletes: [], cancelled: [] };
  // Every document's problems, told at once (a folder with four mistakes is one round trip, not four): those the
  // reading found first.
  const problems: ErrorDetail[] = [...earlier.problems];
  // A document with problems of its own is still what other documents name: naming it is no second problem.
  const unread = (type: Parsed["type"]) => earlier.unread.filter((u) => u.type === undefined || u.type === type);
  const t = nowIso();
  const of = <T extends Parsed["type"]>(type: T) => docs.filter((d): d is Of<T> => d.type === type);
  /** The keys the folder's documents of a type have, read or not. */
  const keysOf = (type: Parsed["type"]) => new Set([...of(type).map((d) => d.key), ...unread(type).map((u) => u.key)]);
  /** The ids of the existing records the documents stand for: never pruned, whatever key they had. */
  const held = new Set<string>();

  // Environments first: automations name them.
  const allEnvs = await store.allEnvironments(db, projectId);
  const envByKey = new Map(allEnvs.filter((e) => e.key !== null).map((e) => [e.key as string, e]));
  const envIdByName = new Map(allEnvs.map((e) => [e.name, e.id]));
  for (const u of unread("environment")) if (u.name !== undefined && !envIdByName.has(u.name)) envIdByName.set(u.name, "env_unread");
  for (const d of of("environment")) {
    try {
      // An environment of that name not applied yet is adopted (it gets the key).
      const current = appliedRecord(envByKey, d, keysOf("environment")) ?? allEnvs.find((e) => e.name === d.body.name && e.key === null);
      if (current) held.add(current.id);
      const clash = allEnvs.find((e) => e.name === d.body.name && e.id !== current?.id);
      if (clash)
        throw invalid("an environment of that name already exists", [
          problemAt(d.path, d.line(["name"]), "name", `an environment named "${d.body.name}" exists and is not this document's`),
        ]);
      // Known to the automations before its secrets are checked: a secret not set is one problem, not one per automation.
      const id = current?.id ?? newId("env");
      envIdByName.set(d.body.name, id);
      const wanted: Record<string, string> = {};
      // svc test applies no environment: its secrets' values are neither sent nor needed.
      for (const [name, variable] of Object.entries(checkOnly ? {} : d.body.secrets)) {
        const value = secretValues[variable];
        if (value === undefined)
          throw invalid("a secret's environment variable is not set", [
            problemAt(d.path, d.line(["secrets", name]), `secrets.${name}`, `the environment variable ${variable} is not set`),
          ]);
        if (value.length < SECRET_MIN_CHARS)
          throw invalid("a secret's value is too short", [
            problemAt(d.path, d.line(["secrets", name]), `secrets.${name}`, `the environment variable ${variable} is ${SECRET_TOO_SHORT}`),
          ]);
        wanted[name] = value;
      }
      // As the API stores them. Unlike the other fields, protection and runner routing left out of a document keep
      // what the environment has (a new one: unprotected, BASE_URL's host, any runner): a folder written before
      // they could be written, or by hand, must not quietly unprotect production. They change when the file says so.
      const protection = {
        protected: d.body.protected === undefined ? (current?.protected ?? 0) : d.body.protected ? 1 : 0,
        allowed_hosts: d.body.allowed_hosts === undefined ? (current?.allowed_hosts ?? null) : allowedHostsText(d.body.allowed_hosts),
        runner_labels: d.body.runner_labels === undefined ? (current?.runner_labels ?? "[]") : runnerLabelsText(d.body.runner_labels),
      };
      if (!current) {
        // Only owners and admins protect an environment or set its allowed_hosts, as when creating one by the API.
        if (!checkOnly)
          assertMayChangeEnvironment(ctx, null, {
            ...(d.body.protected ? { protected: true } : {}),
            ...(protection.allowed_hosts !== null ? { allowed_hosts: d.body.allowed_hosts } : {}),
          });
        planCreate(plan, { type: "environment", key: d.key, name: d.body.name, id }, (w) =>
          environments.insertEnvironment(w, {
            id,
            project_id: projectId,
            name: d.body.name,
            variables: JSON.stringify(d.body.variables),
            secrets: sealSecrets(ctx.core.secrets, id, wanted),
            secrets_sealed: 1,
            ...protection,
            key: d.key,
            created_at: t,
            updated_at: t,
          }),
        );
        continue;
      }
      const hosts = (text: string | null, id: string) => (text === null ? null : readJsonColumn(StringList, text, `allowed_hosts of environment ${id}`));
      const fields = changedFields(
        {
          name: current.name,
          variables: readJsonColumn(StringMap, current.variables, `variables of environment ${current.id}`),
          protected: current.protected,
          allowed_hosts: hosts(current.allowed_hosts, current.id),
          runner_labels: readJsonColumn(StringList, current.runner_labels, `runner_labels of environment ${current.id}`),
          key: current.key,
        },
        {
          name: d.body.name,
          variables: d.body.variables,
          protected: protection.protected,
          allowed_hosts: hosts(protection.allowed_hosts, current.id),
          runner_labels: readJsonColumn(StringList, protection.runner_labels, `runner_labels of environment ${current.id}`),
          key: d.key,
        },
      );
      if (canonical(openSecrets(ctx.core.secrets, current).values) !== canonical(wanted)) fields.push("secrets");
      if (fields.length === 0) continue;
      // Any change to a protected environment, and a change of protection, is for owners and admins, as by the API.
      if (!checkOnly)
        assertMayChangeEnvironment(ctx, current, {
          ...(fields.includes("protected") ? { protected: d.body.protected === true } : {}),
          ...(fields.includes("allowed_hosts") ? { allowed_hosts: d.body.allowed_hosts ?? null } : {}),
        });
      plan.changes.push({ op: "update", type: "environment", key: d.key, name: d.body.name, id: current.id, fields });
      plan.writes.push((w) =>
        environments.updateEnvironment(w, current.id, {
          name: d.body.name,
          variables: JSON.stringify(d.body.variables),
          ...protection,
          key: d.key,
          ...(fields.includes("secrets") ? { secrets: sealSecrets(ctx.core.secrets, current.id, wanted), secrets_sealed: 1 } : {}),
          updated_at: nextStamp(current.updated_at),
        }),
      );
    } catch (e) {
      if (!kept(problems, e)) throw e;
    }
  }

  // Automations.
  const keyedAut = new Map((await store.keyedAutomations(db, projectId)).map((a) => [a.key as string, a]));
  const autIdByKey = new Map([...keyedAut].map(([k, a]) => [k, a.id]));
  for (const u of unread("automation")) if (!autIdByKey.has(u.key)) autIdByKey.set(u.key, "aut_unread");
  const automationKeys = keysOf("automation");
  for (const d of of("automation")) {
    try {
      let current: AutRow | undefined = appliedRecord(keyedAut, d, automationKeys);
      // Taken over by its key: its old key (the path) names it no more, here as in the next apply.
      if (current && current.key !== d.key) autIdByKey.delete(current.key as string);
      if (!current && d.adopt && (await store.findUnkeyed(db, "automations", projectId, d.adopt)))
        current = await automations.findAutomation(db, projectId, d.adopt);
      if (current) held.add(current.id);
      const b = d.body;
      let featureId: string | null = null;
      if (b.feature !== undefined) {
        const found = await features.featuresByRef(db, projectId, b.feature, 2);
        const f = found.length === 1 ? found[0] : undefined;
        if (!f) {
          const problem =
            found.length > 1 ? `feature "${b.feature}" names several features: give its id` : `feature "${b.feature}" does not exist in this project`;
          throw invalid("unknown feature", [problemAt(d.path, d.line(["feature"]), "feature", problem)]);
        }
        featureId = f.id;
      }
      let environmentId: string | null = null;
      if (b.environment !== undefined) {
        environmentId =
          envIdByName.get(b.environment) ?? (b.environment.startsWith("env_") && allEnvs.some((e) => e.id === b.environment) ? b.environment : null);
        if (!environmentId)
          throw invalid("unknown environment", [
            problemAt(d.path, d.line(["environment"]), "environment", `environment "${b.environment}" does not exist in this project or the folder`),
          ]);
      }
      const next = {
        name: b.name,
        description: b.description ?? "",
        kind: b.kind,
        steps: JSON.stringify(b.steps),
        feature_id: featureId,
        environment_id: environmentId,
        tags: JSON.stringify(b.tags ?? []),
        status: b.status ?? "active",
        timeout_ms: b.timeout_ms ?? ctx.core.config.runner.default_timeout_ms,
        retries: b.retries ?? 0,
        quarantined: b.quarantined ? 1 : 0,
        source: "applied" as const,
        key: d.key,
      };
      if (!current) {
        const id = newId("aut");
        autIdByKey.set(d.key, id);
        planCreate(plan, { type: "automation", key: d.key, name: b.name, id }, (w) =>
          automations.insertAutomation(w, {
            ...next,
            id,
            project_id: projectId,
            generation_id: null,
            edited: 0,
            last_run_id: null,
            last_run_status: null,
            last_run_at: null,
            created_at: t,
            updated_at: t,
          }),
        );
        continue;
      }
      const row = current;
      autIdByKey.set(d.key, row.id);
      const asStored = { ...row, steps: JSON.parse(row.steps) as unknown, tags: JSON.parse(row.tags) as unknown };
      const fields = changedFields(asStored, { ...next, steps: b.steps, tags: b.tags ?? [] });
      if (fields.length === 0) continue;
      plan.changes.push({ op: "update", type: "automation", key: d.key, name: b.name, id: row.id, fields });
      plan.writes.push((w) => automations.updateAutomation(w, row.id, { ...next, updated_at: nextStamp(row.updated_at) }));
    } catch (e) {
      if (!kept(problems, e)) throw e;
      if (!autIdByKey.has(d.key)) autIdByKey.set(d.key, "aut_unplanned");
    }
  }

  const doomed = (type: Parsed["type"], rows: { id: string; key: string | null }[]) => {
    const kept = keysOf(type);
    return new Set(prune || checkOnly ? rows.filter((r) => !kept.has(r.key as string) && !held.has(r.id)).map((r) => r.id) : []);
  };
  assertNamesFree(
    problems,
    "automation",
    of("automation"),
    autIdByKey,
    doomed("automation", [...keyedAut.values()]),
    await store.automationNames(db, projectId),
  );

  // Groups: their members are automations named by key.
  const keyedGrp = new Map((await store.keyedGroups(db, projectId)).map((g) => [g.key as string, g]));
  const grpIdByKey = new Map([...keyedGrp].map(([k, g]) => [k, g.id]));
  for (const u of unread("group")) if (!grpIdByKey.has(u.key)) grpIdByKey.set(u.key, "grp_unread");
  const groupKeys = keysOf("group");
  for (const d of of("group")) {
    try {
      // A group of that name not applied yet is adopted (it gets the key). Known before its members are checked, so
      // that a schedule naming it is checked too.
      const current: GrpRow | undefined =
        appliedRecord(keyedGrp, d, groupKeys) ?? (await groups.groupsNamed(db, projectId, d.body.name, 10)).find((g) => g.key === null);
      if (current) held.add(current.id);
      if (current && current.key !== null && current.key !== d.key) grpIdByKey.delete(current.key);
      grpIdByKey.set(d.key, current?.id ?? newId("grp"));
      // Every unknown member is told, not only the first.
      const unknown: ErrorDetail[] = [];
      const ids = d.body.automations.map((k, i) => {
        const id = autIdByKey.get(k);
        if (!id)
          unknown.push(problemAt(d.path, d.line(["automations", i]), `automations.${i}`, `no automation has the key "${k}"${keyHint(docs, "automation", k)}`));
        return id ?? "";
      });
      if (unknown.length > 0) throw invalid("a group names an unknown automation", unknown);
      const next = {
        name: d.body.name,
        description: d.body.description ?? "",
        automation_ids: JSON.stringify(ids),
        mode: d.body.mode ?? ("parallel" as const),
        stop_on_failure: d.body.stop_on_failure ? 1 : 0,
        key: d.key,
      };
      if (!current) {
        const id = grpIdByKey.get(d.key) as string;
        planCreate(plan, { type: "group", key: d.key, name: d.body.name, id }, (w) =>
          groups.insertGroup(w, { ...next, id, project_id: projectId, created_at: t, updated_at: t }),
        );
        continue;
      }
      const fields = changedFields(
        { ...current, automation_ids: readJsonColumn(StringList, current.automation_ids, `automation_ids of group ${current.id}`) },
        { ...next, automation_ids: ids },
      );
      if (fields.length === 0) continue;
      plan.changes.push({ op: "update", type: "group", key: d.key, name: d.body.name, id: current.id, fields });
      plan.writes.push((w) => groups.updateGroup(w, current.id, { ...next, updated_at: nextStamp(current.updated_at) }));
    } catch (e) {
      if (!kept(problems, e)) throw e;
      if (!grpIdByKey.has(d.key)) grpIdByKey.set(d.key, "grp_unplanned");
    }
  }

  assertNamesFree(problems, "group", of("group"), grpIdByKey, doomed("group", [...keyedGrp.values()]), await store.groupNames(db, projectId));

  const keyedSch = await planSchedules(problems, ctx, db, plan, projectId, of("schedule"), {
    autIdByKey,
    grpIdByKey,
    envIdByName,
    allEnvs,
    docs,
    folderKeys: keysOf("schedule"),
    held,
    checkOnly,
  });
  const keyedChan = await planAlertChannels(problems, ctx, db, plan, projectId, of("alert_channel"), {
    secretValues,
    folderKeys: keysOf("alert_channel"),
    held,
    checkOnly,
  });

  if (problems.length > 0) throw invalid(`${problems.length} problem${problems.length === 1 ? "" : "s"} in the documents`, problems);
  if (prune && !checkOnly)
    prunePlan(ctx, plan, projectId, docs, held, {
      automations: [...keyedAut.values()],
      groups: [...keyedGrp.values()],
      environments: [...envByKey.values()],
      schedules: keyedSch,
      alert_channels: keyedChan,
    });
  return plan;
}

/**
 * Names are unique in a project: a document may not take the name of a record the folder does not hold (one that
 * stays, that is: prune deleting it frees the name). Said at the document's name, before anything is written.
 */
function assertNamesFree(
  problems: ErrorDetail[],
  noun: "automation" | "group",
  docs: { key: string; path: string; line: (p: PropertyKey[]) => number; body: { name: string } }[],
  idByKey: Map<string, string>,
  deleted: Set<string>,
  /** Every record of that kind in the project (one read for all the documents), oldest first. */
  existing: { id: string; name: string; key: string | null }[],
): void {
  const held = new Set(docs.map((d) => idByKey.get(d.key)));
  const byName = new Map<string, { id: string; key: string | null }>();
  for (const r of existing) if (!held.has(r.id) && !deleted.has(r.id) && !byName.has(r.name)) byName.set(r.name, r);
  for (const d of docs) {
    try {
      const other = byName.get(d.body.name);
      if (!other) continue;
      const whose =
        other.key === null ? "made outside the folder" : `applied from "${other.key}", which the folder no longer has (apply with --prune to delete it)`;
      const a = noun === "automation" ? "an" : "a";
      throw invalid(`${a} ${noun} of that name already exists`, [
        problemAt(
          d.path,
          d.line(["name"]),
          "name",
          `${a} ${noun} named "${d.body.name}" exists (${other.id}, ${whose}): rename one of them${noun === "automation" && other.key === null ? `, or adopt it with "id: ${other.id}" in this file` : ""}`,
        ),
      ]);
    } catch (e) {
      if (!kept(problems, e)) throw e;
    }
  }
}

/** A record the folder adds: told in the plan, written with the rest. */
function planCreate(plan: Plan, change: Pick<Change, "type" | "key" | "name" | "id">, write: (db: Kysely<DB>) => Promise<unknown>): void {
  plan.changes.push({ op: "create", ...change, fields: [] });
  plan.writes.push(write);
}

/** A document's own problem (a 400 at its file and line) is kept, and the next document is read. */
function kept(problems: ErrorDetail[], e: unknown): boolean {
  if (!(e instanceof AppError) || e.code !== "invalid_request" || !e.details) return false;
  problems.push(...e.details);
  return true;
}

/** A 400 from a shared rule (schedule timing, alert channel kinds), its details moved to the document's file and line. */
function relocate(d: Parsed, e: unknown, rename: Record<string, string> = {}): unknown {
  if (!(e instanceof AppError) || e.code !== "invalid_request" || !e.details) return e;
  return invalid(
    e.message,
    e.details.map((x) => {
      const field = rename[x.path] ?? x.path;
      return problemAt(d.path, d.line(field.split(".")), field, x.message);
    }),
  );
}

/** The one record a reference names: an applied record's key in this folder, else the exact name of one record. */
async function targetId(db: Kysely<DB>, projectId: string, kind: "automation" | "group", ref: string, byKey: Map<string, string>): Promise<string | undefined> {
  const keyed = byKey.get(ref);
  if (keyed) return keyed;
  const rows = kind === "automation" ? await store.automationNames(db, projectId) : await store.groupNames(db, projectId);
  const named = rows.filter((r) => r.name === ref || r.id === ref);
  return named.length === 1 ? named[0]?.id : undefined;
}

async function planSchedules(
  problems: ErrorDetail[],
  ctx: OpContext,
  db: Kysely<DB>,
  plan: Plan,
  projectId: string,
  docs: Of<"schedule">[],
  refs: {
    autIdByKey: Map<string, string>;
    grpIdByKey: Map<string, string>;
    envIdByName: Map<string, string>;
    allEnvs: EnvRow[];
    /** Every document of the folder, to say a reference's new key. */
    docs: Parsed[];
    folderKeys: Set<string>;
    held: Set<string>;
    checkOnly: boolean;
  },
): Promise<SchRow[]> {
  const all = await store.allSchedules(db, projectId);
  const keyed = new Map(all.filter((r) => r.key !== null).map((r) => [r.key as string, r]));
  const now = new Date();
  for (const d of docs) {
    try {
      const b = d.body;
      const timing = {
        cron: b.cron ?? null,
        timezone: b.cron !== undefined ? (b.timezone ?? "UTC") : (b.timezone ?? null),
        interval_seconds: b.interval_seconds ?? null,
      };
      try {
        checkTiming(timing);
      } catch (e) {
        throw relocate(d, e);
      }
      let target: { automation: string } | { group: string } | { tags: string[] };
      if ("tags" in b.target) target = { tags: [...new Set(b.target.tags)] };
      else {
        const kind = "automation" in b.target ? "automation" : "group";
        const ref = "automation" in b.target ? b.target.automation : b.target.group;
        const id = await targetId(db, projectId, kind, ref, kind === "automation" ? refs.autIdByKey : refs.grpIdByKey);
        if (!id)
          throw invalid(`a schedule names an unknown ${kind}`, [
            problemAt(d.path, d.line(["target", kind]), `target.${kind}`, `no ${kind} has the key or the exact name "${ref}"${keyHint(refs.docs, kind, ref)}`),
          ]);
        target = kind === "automation" ? { automation: id } : { group: id };
      }
      let environmentId: string | null = null;
      if (b.environment !== undefined && b.environment !== null) {
        const ref = b.environment;
        environmentId = refs.envIdByName.get(ref) ?? (refs.allEnvs.some((e) => e.id === ref) ? ref : null);
        if (!environmentId)
          throw invalid("unknown environment", [
            problemAt(d.path, d.line(["environment"]), "environment", `environment "${ref}" does not exist in this project or the folder`),
          ]);
        // Whoever applies a schedule answers for the runs it starts, as when creating one.
        if (!refs.checkOnly) await assertMayRunIn(ctx, db as Parameters<typeof assertMayRunIn>[1], [environmentId]);
      }
      const next = { name: b.name, target, environment_id: environmentId, ...timing, enabled: b.enabled ? 1 : 0, key: d.key };
      const current = appliedRecord(keyed, d, refs.folderKeys) ?? all.find((r) => r.key === null && r.name === b.name);
      if (current) refs.held.add(current.id);
      if (!current) {
        const id = newId("sch");
        const t = now.toISOString();
        planCreate(plan, { type: "schedule", key: d.key, name: b.name, id }, (w) =>
          schedules.insertSchedule(w, {
            ...next,
            id,
            project_id: projectId,
            target: JSON.stringify(target),
            next_run_at: firstDue(timing, b.enabled, now),
            last_fired_at: null,
            last_error: null,
            created_by: ctx.principal.userId,
            created_at: t,
            updated_at: t,
          }),
        );
        continue;
      }
      const row = current;
      const fields = changedFields({ ...row, target: readJsonColumnOr(StoredTarget, row.target, null) } as Record<string, unknown>, next);
      if (fields.length === 0) continue;
      const retimed = fields.some((f) => ["cron", "timezone", "interval_seconds", "enabled"].includes(f));
      plan.changes.push({ op: "update", type: "schedule", key: d.key, name: b.name, id: row.id, fields });
      plan.writes.push((w) =>
        schedules.updateSchedule(w, row.id, {
          ...next,
          target: JSON.stringify(target),
          next_run_at: retimed ? firstDue(timing, b.enabled, now) : row.next_run_at,
          created_by: ctx.principal.userId,
          updated_at: nextStamp(row.updated_at),
        }),
      );
    } catch (e) {
      if (!kept(problems, e)) throw e;
    }
  }
  return [...keyed.values()];
}

async function planAlertChannels(
  problems: ErrorDetail[],
  ctx: OpContext,
  db: Kysely<DB>,
  plan: Plan,
  projectId: string,
  docs: Of<"alert_channel">[],
  { secretValues, folderKeys, held, checkOnly }: { secretValues: Record<string, string>; folderKeys: Set<string>; held: Set<string>; checkOnly: boolean },
): Promise<ChanRow[]> {
  const all = await store.allAlertChannels(db, projectId);
  const keyed = new Map(all.filter((r) => r.key !== null).map((r) => [r.key as string, r]));
  const t = nowIso();
  for (const d of docs) {
    try {
      const b = d.body;
      const at = (field: string, message: string) => invalid(message, [problemAt(d.path, d.line([field]), field, message)]);
      const fromVariable = (field: "url_from" | "secret_from", variable: string) => {
        const value = secretValues[variable];
        if (value === undefined) throw at(field, `the environment variable ${variable} is not set`);
        return value;
      };
      if (b.url !== undefined && b.url_from !== undefined) throw at("url_from", "give url or url_from, not both");
      // Only checking (svc test), the variables' values are not sent: a URL from one is there, unread.
      const url = b.url ?? (b.url_from !== undefined ? (checkOnly ? "" : fromVariable("url_from", b.url_from).trim()) : null);
      const secret = b.secret_from !== undefined && !checkOnly ? fromVariable("secret_from", b.secret_from) : null;
      if (secret !== null && (secret.length < 8 || secret.length > 1000))
        throw at("secret_from", `the secret in ${b.secret_from} must have 8 to 1000 characters`);
      try {
        checkChannel(ctx, {
          kind: b.kind,
          url,
          hasSecret: b.secret_from !== undefined,
          emailTo: b.email_to ?? null,
          ...(checkOnly && b.url_from !== undefined ? { keptUnreadableUrl: true } : {}),
        });
      } catch (e) {
        throw relocate(d, e, { secret: "secret_from", ...(b.url_from !== undefined ? { url: "url_from" } : {}) });
      }
      const next = {
        name: b.name,
        kind: b.kind,
        url,
        email_to: b.email_to ? JSON.stringify(b.email_to) : null,
        events: uniqueEvents(b.events),
        remind_every: b.remind_every ?? null,
        key: d.key,
      };
      const current = appliedRecord(keyed, d, folderKeys) ?? all.find((r) => r.key === null && r.name === b.name);
      if (current) held.add(current.id);
      if (!current) {
        const id = newId("ach");
        planCreate(plan, { type: "alert_channel", key: d.key, name: b.name, id }, (w) =>
          alerts.insertChannel(w, {
            ...next,
            // A Slack URL is sealed at rest, as the API writes it.
            url: storedChannelUrl(ctx.core.secrets, { id, kind: b.kind, url }),
            id,
            project_id: projectId,
            secret: secret === null ? null : ctx.core.secrets.seal(secret, secretPlace(id)),
            created_at: t,
            updated_at: t,
          }),
        );
        continue;
      }
      const row = current;
      if (row.kind !== b.kind) throw at("kind", `the alert channel "${row.name}" is a ${row.kind} channel: a channel's kind cannot change`);
      const parsed = (r: typeof next) => ({ ...r, email_to: r.email_to === null ? null : JSON.parse(r.email_to), events: JSON.parse(r.events) });
      // Compared with the URL in plain text (a Slack one is stored sealed).
      const fields = changedFields(parsed({ ...row, url: openChannelUrl(ctx.core.secrets, row).url, key: row.key as string }), parsed(next));
      const stored = row.secret === null ? null : ctx.core.secrets.open(row.secret, secretPlace(row.id));
      if (stored !== secret) fields.push("secret");
      if (fields.length === 0) continue;
      plan.changes.push({ op: "update", type: "alert_channel", key: d.key, name: b.name, id: row.id, fields });
      plan.writes.push((w) =>
        alerts.updateChannel(w, row.id, {
          ...next,
          url: storedChannelUrl(ctx.core.secrets, { id: row.id, kind: b.kind, url }),
          secret: secret === null ? null : ctx.core.secrets.seal(secret, secretPlace(row.id)),
          updated_at: nextStamp(row.updated_at),
        }),
      );
    } catch (e) {
      if (!kept(problems, e)) throw e;
    }
  }
  return [...keyed.values()];
}

/** Applied records whose key no document has: deleted (and nothing else is). */
function prunePlan(
  ctx: OpContext,
  plan: Plan,
  projectId: string,
  docs: Parsed[],
  /** The records documents stand for (one taken over by a new key still has its old one until written). */
  held: Set<string>,
  keyed: { automations: AutRow[]; groups: GrpRow[]; environments: EnvRow[]; schedules: SchRow[]; alert_channels: ChanRow[] },
) {
  const kept = new Set(docs.map((d) => `${d.type} ${d.key}`));
  const gone = <T extends { id: string; key: string | null }>(type: Parsed["type"], rows: T[]) =>
    rows.filter((r) => !kept.has(`${type} ${r.key}`) && !held.has(r.id));
  for (const r of gone("schedule", keyed.schedules)) {
    plan.changes.push({ op: "delete", type: "schedule", key: r.key as string, name: r.name, id: r.id, fields: [] });
    plan.deletes.push((w) => schedules.deleteSchedule(w, r.id));
  }
  for (const r of gone("alert_channel", keyed.alert_channels)) {
    plan.changes.push({ op: "delete", type: "alert_channel", key: r.key as string, name: r.name, id: r.id, fields: [] });
    plan.deletes.push((w) => alerts.deleteChannel(w, r.id));
  }
  for (const g of gone("group", keyed.groups)) {
    plan.changes.push({ op: "delete", type: "group", key: g.key as string, name: g.name, id: g.id, fields: [] });
    plan.deletes.push((w) => groups.deleteGroup(w, g.id));
  }
  for (const a of gone("automation", keyed.automations)) {
    plan.changes.push({ op: "delete", type: "automation", key: a.key as string, name: a.name, id: a.id, fields: [] });
    plan.deletes.push(async (w) => {
      plan.cancelled.push(
        ...(await cancelRunsWhere(ctx, w as Parameters<typeof cancelRunsWhere>[1], { automationId: a.id }, "the automation was deleted", {
          tellAfterCommit: true,
        })),
      );
      await automations.deleteAutomation(w, a.id);
      for (const g of await groups.groupMemberLists(w, projectId)) {
        const ids = readJsonColumn(StringList, g.automation_ids, `automation_ids of group ${g.id}`);
        if (ids.includes(a.id)) await groups.updateGroup(w, g.id, { automation_ids: JSON.stringify(ids.filter((i) => i !== a.id)), updated_at: nowIso() });
      }
    });
  }
  for (const e of gone("environment", keyed.environments)) {
    if (e.protected === 1 && !canAdminister(ctx.principal)) throw forbidden(`the environment "${e.name}" is protected: only owners and admins can delete it`);
    plan.changes.push({ op: "delete", type: "environment", key: e.key as string, name: e.name, id: e.id, fields: [] });
    plan.deletes.push((w) => environments.deleteEnvironment(w, e.id));
  }
}
