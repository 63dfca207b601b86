// Names where the API wants ids: `svc groups run nightly` and `svc automations run "checkout works"` read
// better in a CI script than ids that differ between installations. A positional id that is not shaped like
// one of its kind is looked up by exact name in the project; none or several matches are usage errors.
import type { ApiClient } from "../src/client/api-client";
import { UsageError } from "./usage";
import { ops } from "../src/manifest/index";

const KINDS = {
  groupId: { prefix: "grp_", noun: "group", list: ops.listGroups },
  automationId: { prefix: "aut_", noun: "automation", list: ops.listAutomations },
} as const;

type Named = { id: string; name: string };

export async function resolveNames(client: ApiClient, input: Record<string, unknown>): Promise<void> {
  for (const [field, kind] of Object.entries(KINDS)) {
    const value = input[field];
    if (typeof value !== "string" || value.startsWith(kind.prefix) || typeof input.project !== "string") continue;
    const found: Named[] = [];
    let cursor: string | null = null;
    do {
      const query: Record<string, unknown> = { project: input.project, limit: 200, ...(cursor ? { cursor } : {}) };
      if (kind.list === ops.listAutomations) query.q = value;
      const page = (await client.send(kind.list, query)).json as { data: Named[]; next_cursor: string | null };
      found.push(...page.data.filter((r) => r.name === value));
      cursor = page.next_cursor;
    } while (cursor && found.length < 2);
    if (found.length === 0) throw new UsageError(`no ${kind.noun} named "${value}" in project ${input.project} (give its name exactly, or its id ${kind.prefix}…)`);
    if (found.length > 1) {
      throw new UsageError(`${found.length} ${kind.noun}s are named "${value}" in project ${input.project}: give the id (${found.map((r) => r.id).join(", ")})`);
    }
    input[field] = (found[0] as Named).id;
  }
}
