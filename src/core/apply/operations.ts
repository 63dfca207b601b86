// `svc apply`: the plan that makes a project match a folder of documents, applied in one transaction.
import { nextStamp } from "../versions";
import type { Kysely, Selectable } from "kysely";
import type { AutomationTable, DB, EnvironmentTable, GroupTable } from "../../db/schema";
import { newId } from "../../security/ids";
import type { ops } from "../../manifest";
import type { ApplyChange } from "../../manifest/apply";
import { forbidden, invalid } from "../../manifest/errors";
import type { z } from "zod";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { startOnce } from "../idempotency";
import { StringList, StringMap } from "../shared/columns";
import { readJsonColumn } from "../shared/json";
import { nowIso } from "../shared/time";
import { resolveProject } from "../scope";
import { cancelRunsWhere } from "../runs/operations";
import { openSecrets, sealSecrets } from "../environments/secrets";
import * as automations from "../automations/store";
import * as environments from "../environments/store";
import * as features from "../features/store";
import * as groups from "../groups/store";
import { type Parsed, parseDocuments, problemAt } from "./documents";
import * as store from "./store";

type O = typeof ops;
type Change = z.infer<typeof ApplyChange>;
type AutRow = Selectable<AutomationTable>;
type GrpRow = Selectable<GroupTable>;
type EnvRow = Selectable<EnvironmentTable>;
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
  /** The writes, run in order inside the transaction. */
  writes: ((db: Kysely<DB>) => Promise<unknown>)[];
}

export const applyDocuments: Handler<O["applyDocuments"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  const docs = parseDocuments(body.documents, body.environment);
  const { answer } = await startOnce(ctx, async (trx) => {
    const plan = await makePlan(ctx, trx, project.id, docs, body.secrets, body.prune);
    if (!body.dry_run) for (const w of plan.writes) await w(trx);
    const count = (op: Change["op"]) => plan.changes.filter((c) => c.op === op).length;
    const summary = plan.changes.length === 0 ? "no changes" : `${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete`;
    return { dry_run: body.dry_run, changes: plan.changes, summary };
  });
  return answer;
};

async function makePlan(
  ctx: OpContext,
  db: Kysely<DB>,
  projectId: string,
  docs: Parsed[],
  secretValues: Record<string, string>,
  prune: boolean,
): Promise<Plan> {
  const plan: Plan = { changes: [], writes: [] };
  const t = nowIso();
  const of = <T extends Parsed["type"]>(type: T) => docs.filter((d): d is Of<T> => d.type === type);

  // Environments first: automations name them.
  const allEnvs = await store.allEnvironments(db, projectId);
  const envByKey = new Map(allEnvs.filter((e) => e.key !== null).map((e) => [e.key as string, e]));
  const envIdByName = new Map(allEnvs.map((e) => [e.name, e.id]));
  for (const d of of("environment")) {
    // An environment of that name not applied yet is adopted (it gets the key).
    const current = envByKey.get(d.key) ?? allEnvs.find((e) => e.name === d.body.name && e.key === null);
    const clash = allEnvs.find((e) => e.name === d.body.name && e.id !== current?.id);
    if (clash)
      throw invalid("an environment of that name already exists", [
        problemAt(d.path, d.line(["name"]), "name", `an environment named "${d.body.name}" exists and is not this document's`),
      ]);
    const wanted: Record<string, string> = {};
    for (const [name, variable] of Object.entries(d.body.secrets)) {
      const value = secretValues[variable];
      if (value === undefined)
        throw invalid("a secret's environment variable is not set", [
          problemAt(d.path, d.line(["secrets", name]), `secrets.${name}`, `the environment variable ${variable} is not set`),
        ]);
      wanted[name] = value;
    }
    const id = current?.id ?? newId("env");
    envIdByName.set(d.body.name, id);
    if (!current) {
      plan.changes.push({ op: "create", type: "environment", key: d.key, name: d.body.name, id, fields: [] });
      plan.writes.push((w) =>
        environments.insertEnvironment(w, {
          id,
          project_id: projectId,
          name: d.body.name,
          variables: JSON.stringify(d.body.variables),
          secrets: sealSecrets(ctx.core.secrets, id, wanted),
          secrets_sealed: 1,
          protected: 0,
          allowed_hosts: null,
          runner_labels: "[]",
          key: d.key,
          created_at: t,
          updated_at: t,
        }),
      );
      continue;
    }
    const fields = changedFields(
      { name: current.name, variables: readJsonColumn(StringMap, current.variables, `variables of environment ${current.id}`), key: current.key },
      { name: d.body.name, variables: d.body.variables, key: d.key },
    );
    if (canonical(openSecrets(ctx.core.secrets, current).values) !== canonical(wanted)) fields.push("secrets");
    if (fields.length === 0) continue;
    if (current.protected === 1 && !canAdminister(ctx.principal))
      throw forbidden(`the environment "${current.name}" is protected: only owners and admins can change it`);
    plan.changes.push({ op: "update", type: "environment", key: d.key, name: d.body.name, id: current.id, fields });
    plan.writes.push((w) =>
      environments.updateEnvironment(w, current.id, {
        name: d.body.name,
        variables: JSON.stringify(d.body.variables),
        key: d.key,
        ...(fields.includes("secrets") ? { secrets: sealSecrets(ctx.core.secrets, current.id, wanted), secrets_sealed: 1 } : {}),
        updated_at: nextStamp(current.updated_at),
      }),
    );
  }

  // Automations.
  const keyedAut = new Map((await store.keyedAutomations(db, projectId)).map((a) => [a.key as string, a]));
  const autIdByKey = new Map([...keyedAut].map(([k, a]) => [k, a.id]));
  for (const d of of("automation")) {
    let current: AutRow | undefined = keyedAut.get(d.key);
    if (!current && d.adopt && (await store.findUnkeyed(db, "automations", projectId, d.adopt)))
      current = await automations.findAutomation(db, projectId, d.adopt);
    const b = d.body;
    let featureId: string | null = null;
    if (b.feature !== undefined) {
      const f = await features.findFeature(db, projectId, b.feature);
      if (!f) throw invalid("unknown feature", [problemAt(d.path, d.line(["feature"]), "feature", `feature "${b.feature}" does not exist in this project`)]);
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
      source: "applied" as const,
      key: d.key,
    };
    if (!current) {
      const id = newId("aut");
      autIdByKey.set(d.key, id);
      plan.changes.push({ op: "create", type: "automation", key: d.key, name: b.name, id, fields: [] });
      plan.writes.push((w) =>
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
  }

  // Groups: their members are automations named by key.
  const keyedGrp = new Map((await store.keyedGroups(db, projectId)).map((g) => [g.key as string, g]));
  for (const d of of("group")) {
    const ids = d.body.automations.map((k, i) => {
      const id = autIdByKey.get(k);
      if (!id)
        throw invalid("a group names an unknown automation", [
          problemAt(d.path, d.line(["automations", i]), `automations.${i}`, `no automation has the key "${k}"`),
        ]);
      return id;
    });
    const next = { name: d.body.name, description: d.body.description ?? "", automation_ids: JSON.stringify(ids), key: d.key };
    // A group of that name not applied yet is adopted (it gets the key).
    const current: GrpRow | undefined = keyedGrp.get(d.key) ?? (await groups.groupsNamed(db, projectId, d.body.name, 10)).find((g) => g.key === null);
    if (!current) {
      const id = newId("grp");
      plan.changes.push({ op: "create", type: "group", key: d.key, name: d.body.name, id, fields: [] });
      plan.writes.push((w) => groups.insertGroup(w, { ...next, id, project_id: projectId, created_at: t, updated_at: t }));
      continue;
    }
    const fields = changedFields(
      { ...current, automation_ids: readJsonColumn(StringList, current.automation_ids, `automation_ids of group ${current.id}`) },
      { ...next, automation_ids: ids },
    );
    if (fields.length === 0) continue;
    plan.changes.push({ op: "update", type: "group", key: d.key, name: d.body.name, id: current.id, fields });
    plan.writes.push((w) => groups.updateGroup(w, current.id, { ...next, updated_at: nextStamp(current.updated_at) }));
  }

  if (prune)
    prunePlan(ctx, plan, projectId, docs, { automations: [...keyedAut.values()], groups: [...keyedGrp.values()], environments: [...envByKey.values()] });
  return plan;
}

/** Applied records whose key no document has: deleted (and nothing else is). */
function prunePlan(ctx: OpContext, plan: Plan, projectId: string, docs: Parsed[], keyed: { automations: AutRow[]; groups: GrpRow[]; environments: EnvRow[] }) {
  const kept = new Set(docs.map((d) => `${d.type} ${d.key}`));
  const gone = <T extends { key: string | null }>(type: Parsed["type"], rows: T[]) => rows.filter((r) => !kept.has(`${type} ${r.key}`));
  for (const g of gone("group", keyed.groups)) {
    plan.changes.push({ op: "delete", type: "group", key: g.key as string, name: g.name, id: g.id, fields: [] });
    plan.writes.push((w) => groups.deleteGroup(w, g.id));
  }
  for (const a of gone("automation", keyed.automations)) {
    plan.changes.push({ op: "delete", type: "automation", key: a.key as string, name: a.name, id: a.id, fields: [] });
    plan.writes.push(async (w) => {
      await cancelRunsWhere(ctx, w as Parameters<typeof cancelRunsWhere>[1], { automationId: a.id }, "the automation was deleted");
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
    plan.writes.push((w) => environments.deleteEnvironment(w, e.id));
  }
}
