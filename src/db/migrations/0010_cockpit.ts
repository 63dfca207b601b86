// Names CI can rely on, runs by selection with per-run variables and CI metadata, and groups run in order.
// Automation and group names become unique within a project: existing duplicates are renamed "name (2)", "name (3)", …
// (oldest keeps its name) before the unique indexes are made. A migration cannot log; it keeps what it renamed for
// the start that ran it to log (takeRenamedDuplicates).
import type { Kysely } from "kysely";

export interface RenamedDuplicate {
  table: "automations" | "groups";
  id: string;
  from: string;
  to: string;
}

let renamed: RenamedDuplicate[] = [];

/** What the last run of this migration renamed, once: the caller logs it. */
export function takeRenamedDuplicates(): RenamedDuplicate[] {
  const out = renamed;
  renamed = [];
  return out;
}

interface NamedRow {
  id: string;
  project_id: string;
  name: string;
}
interface NamedTables {
  automations: NamedRow & { created_at: string };
  groups: NamedRow & { created_at: string };
}

async function renameDuplicates(db: Kysely<NamedTables>, table: "automations" | "groups"): Promise<void> {
  const rows = await db.selectFrom(table).select(["id", "project_id", "name"]).orderBy("project_id").orderBy("created_at").orderBy("id").execute();
  const taken = new Map<string, Set<string>>();
  for (const r of rows) {
    const names = taken.get(r.project_id) ?? new Set<string>();
    taken.set(r.project_id, names);
    names.add(r.name);
  }
  const seen = new Map<string, Set<string>>();
  for (const r of rows) {
    const names = seen.get(r.project_id) ?? new Set<string>();
    seen.set(r.project_id, names);
    if (!names.has(r.name)) {
      names.add(r.name);
      continue;
    }
    const all = taken.get(r.project_id) ?? new Set<string>();
    let n = 2;
    while (all.has(`${r.name} (${n})`)) n++;
    const to = `${r.name} (${n})`;
    all.add(to);
    names.add(to);
    await db.updateTable(table).set({ name: to }).where("id", "=", r.id).execute();
    renamed.push({ table, id: r.id, from: r.name, to });
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const named = db as unknown as Kysely<NamedTables>;
  await renameDuplicates(named, "automations");
  await renameDuplicates(named, "groups");
  await db.schema.createIndex("automations_project_name").unique().on("automations").columns(["project_id", "name"]).execute();
  await db.schema.createIndex("groups_project_name").unique().on("groups").columns(["project_id", "name"]).execute();

  await db.schema
    .alterTable("groups")
    .addColumn("mode", "text", (c) => c.notNull().defaultTo("parallel"))
    .execute();
  await db.schema
    .alterTable("groups")
    .addColumn("stop_on_failure", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  // What a group run was started with, to re-run it (from_group_run) and to queue a sequential group's next run.
  await db.schema.alterTable("group_runs").addColumn("environment_id", "text").execute();
  await db.schema
    .alterTable("group_runs")
    .addColumn("variables", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
  await db.schema
    .alterTable("group_runs")
    .addColumn("metadata", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
  await db.schema
    .alterTable("group_runs")
    .addColumn("mode", "text", (c) => c.notNull().defaultTo("parallel"))
    .execute();
  await db.schema
    .alterTable("group_runs")
    .addColumn("stop_on_failure", "integer", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("group_runs")
    .addColumn("pending", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();

  await db.schema
    .alterTable("runs")
    .addColumn("variables", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
  await db.schema
    .alterTable("runs")
    .addColumn("metadata", "text", (c) => c.notNull().defaultTo("{}"))
    .execute();
  await db.schema
    .alterTable("runs")
    .addColumn("one_run_secrets", "text", (c) => c.notNull().defaultTo("[]"))
    .execute();

  // Metadata as rows, so `?metadata.branch=main` is an exact, indexed match on any database.
  await db.schema
    .createTable("run_metadata")
    .addColumn("subject_id", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("run_metadata_pk", ["subject_id", "key"])
    .execute();
  await db.schema.createIndex("run_metadata_key_value").on("run_metadata").columns(["key", "value"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("run_metadata").execute();
  for (const c of ["one_run_secrets", "metadata", "variables"]) await db.schema.alterTable("runs").dropColumn(c).execute();
  for (const c of ["pending", "stop_on_failure", "mode", "metadata", "variables", "environment_id"])
    await db.schema.alterTable("group_runs").dropColumn(c).execute();
  for (const c of ["stop_on_failure", "mode"]) await db.schema.alterTable("groups").dropColumn(c).execute();
  await db.schema.dropIndex("groups_project_name").execute();
  await db.schema.dropIndex("automations_project_name").execute();
}
