// What every importer ends with: automations (source `imported`), and the environment and groups that came with them,
// written in one transaction; names taken in the project get a suffix.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";
import { newId } from "../../security/ids";
import { ops } from "../../manifest";
import type { HttpStep } from "../../manifest/automation-format";
import { plainName } from "../../manifest/define";
import { invalid, zodDetails } from "../../manifest/errors";
import type { OpContext } from "../context";
import { nowIso } from "../shared/time";
import { toAutomation } from "../automations/operations";
import { sealSecrets } from "../environments/secrets";
import * as automations from "../automations/store";
import * as environments from "../environments/store";
import * as groups from "../groups/store";

export interface ImportedAutomation {
  /** Keys the automation within the import (groups name their members by it). */
  ref: string;
  name: string;
  description: string;
  steps: HttpStep[];
  tags?: string[];
}

export interface ImportPlan {
  automations: ImportedAutomation[];
  /** Variables become an environment of that name, the default environment of every imported automation. */
  environment?: { name: string; variables: Record<string, string> };
  groups?: { name: string; description: string; members: string[] }[];
  warnings: { request: string; message: string }[];
}

/** `base`, else `base (2)`, `base (3)` … the first that neither the project nor this import has taken. */
async function freeName(taken: (name: string) => Promise<boolean>, used: Set<string>, base: string): Promise<string> {
  let name = base;
  for (let n = 2; used.has(name) || (await taken(name)); n++) name = `${base} (${n})`;
  used.add(name);
  return name;
}

/** A name from the imported document as svc keeps names (no line breaks or control characters; never empty). */
const importedName = (name: string) => plainName(name) || "request";
const importedTags = (tags: string[] | undefined) => (tags === undefined ? undefined : [...new Set(tags.map(plainName).filter((t) => t !== ""))]);

export async function saveImport(ctx: OpContext, projectId: string, plan: ImportPlan) {
  if (plan.automations.length === 0) throw invalid("there is no request to import", [{ path: "", message: "no request found" }]);
  // Every automation is checked as create_automation checks it before anything is written.
  plan.automations.forEach((a, i) => {
    const checked = ops.createAutomation.body?.safeParse({
      name: importedName(a.name).slice(0, 200),
      kind: "http",
      steps: a.steps,
      tags: importedTags(a.tags),
    });
    if (!checked) throw new Error("create_automation has no body schema");
    if (!checked.success)
      throw invalid(
        `the request "${a.name}" is not a valid automation`,
        zodDetails(checked.error).map((d) => ({ ...d, path: `requests.${i}${d.path ? `.${d.path}` : ""}` })),
      );
  });
  const db = ctx.core.db;
  const t = nowIso();
  const answer = await db.transaction().execute(async (w: Kysely<DB>) => {
    let environmentId: string | null = null;
    if (plan.environment) {
      environmentId = newId("env");
      const name = await freeName((n) => environments.environmentNameTaken(w, projectId, n), new Set(), importedName(plan.environment.name).slice(0, 190));
      await environments.insertEnvironment(w, {
        id: environmentId,
        project_id: projectId,
        name,
        variables: JSON.stringify(plan.environment.variables),
        secrets: sealSecrets(ctx.core.secrets, environmentId, {}),
        secrets_sealed: 1,
        protected: 0,
        allowed_hosts: null,
        created_at: t,
        updated_at: t,
      });
    }
    const used = new Set<string>();
    const idByRef = new Map<string, string>();
    const rows = [];
    const renamed = new Map<string, string>();
    for (const a of plan.automations) {
      const name = await freeName(async (n) => (await automations.automationsNamed(w, projectId, n, 1)).length > 0, used, importedName(a.name).slice(0, 190));
      renamed.set(a.name, name);
      const row = {
        id: newId("aut"),
        project_id: projectId,
        feature_id: null,
        generation_id: null,
        name,
        description: a.description,
        kind: "http" as const,
        steps: JSON.stringify(a.steps),
        environment_id: environmentId,
        tags: JSON.stringify(importedTags(a.tags) ?? []),
        status: "active" as const,
        source: "imported" as const,
        edited: 0,
        timeout_ms: ctx.core.config.runner.default_timeout_ms,
        retries: 0,
        last_run_id: null,
        last_run_status: null,
        last_run_at: null,
        key: null,
        quarantined: 0,
        created_at: t,
        updated_at: t,
      };
      await automations.insertAutomation(w, row);
      idByRef.set(a.ref, row.id);
      rows.push(row);
    }
    const groupNames = new Set<string>();
    const madeGroups: { id: string; name: string }[] = [];
    for (const g of plan.groups ?? []) {
      const ids = g.members.map((m) => idByRef.get(m)).filter((id): id is string => id !== undefined);
      if (ids.length === 0) continue;
      const name = await freeName(async (n) => (await groups.groupsNamed(w, projectId, n, 1)).length > 0, groupNames, importedName(g.name).slice(0, 190));
      const id = newId("grp");
      await groups.insertGroup(w, {
        id,
        project_id: projectId,
        name,
        description: g.description,
        automation_ids: JSON.stringify(ids),
        created_at: t,
        updated_at: t,
      });
      madeGroups.push({ id, name });
    }
    return { rows, environmentId, madeGroups, renamed };
  });
  return {
    automations: answer.rows.map((r) => toAutomation(r)),
    environment: answer.environmentId ? { id: answer.environmentId } : null,
    groups: answer.madeGroups,
    warnings: plan.warnings.map((w) => ({ request: answer.renamed.get(w.request) ?? w.request, message: w.message })),
  };
}
