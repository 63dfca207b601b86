// Copying an SQLite store into an empty PostgreSQL one (`svc admin migrate-to-postgres`): both are at the same
// migration, so the tables and columns are the same; every table is copied in dependency order (a table after
// those it references) inside one transaction, each value converted to its PostgreSQL column's type, and the row
// counts compared before the transaction commits.
import type { Database } from "bun:sqlite";
import { type Kysely, sql } from "kysely";
import postgres from "postgres";
import type { DB } from "./schema";

/** Kysely's own bookkeeping: the target has it from running the migrations itself. */
const MIGRATION_TABLES = new Set(["kysely_migration", "kysely_migration_lock"]);

/** A refusal or failure the operator can act on. */
export class CopyError extends Error {}

export interface TableCount {
  table: string;
  sqlite: number;
  postgres: number;
}

/** The SQLite file's tables, each after the tables it references. */
export function tablesInDependencyOrder(sqlite: Database): string[] {
  const names = sqlite
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map((r) => r.name)
    .filter((n) => !MIGRATION_TABLES.has(n));
  const refs = new Map(
    names.map((n) => [
      n,
      sqlite
        .query<{ table: string }, []>(`PRAGMA foreign_key_list("${n}")`)
        .all()
        .map((r) => r.table),
    ]),
  );
  const ordered: string[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (n: string) => {
    if (state.get(n) === "done") return;
    if (state.get(n) === "visiting") throw new CopyError(`the tables reference each other in a cycle through ${n}`);
    state.set(n, "visiting");
    for (const r of refs.get(n) ?? []) if (r !== n && refs.has(r)) visit(r);
    state.set(n, "done");
    ordered.push(n);
  };
  for (const n of names) visit(n);
  return ordered;
}

/**
 * What makes the target database other than empty, before anything is created in it: tables that are not svc's,
 * and svc's tables holding rows (an svc already used there). Empty: nothing to say.
 */
export async function whyNotEmpty(url: string, ours: string[]): Promise<string[]> {
  const pg = postgres(url, { max: 1, onnotice: () => undefined, connect_timeout: 10 });
  try {
    const rows = await pg<{ table_name: string }[]>`
      select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`;
    const known = new Set([...ours, ...MIGRATION_TABLES]);
    const reasons = rows.filter((r) => !known.has(r.table_name)).map((r) => `table ${r.table_name}`);
    for (const { table_name: t } of rows) {
      if (!ours.includes(t)) continue;
      const [{ n } = { n: "0" }] = await pg<{ n: string }[]>`select count(*) as n from ${pg(t)}`;
      if (Number(n) > 0) reasons.push(`${n} rows in ${t}`);
    }
    return reasons;
  } finally {
    await pg.end();
  }
}

/** A value as SQLite holds it, made fit for a PostgreSQL column of `type` (SQLite's columns take any type). */
function convert(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case "smallint":
    case "integer":
    case "bigint":
    case "numeric":
    case "real":
    case "double precision":
      if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
      if (typeof v === "bigint") return Number(v);
      if (typeof v === "boolean") return v ? 1 : 0;
      return v;
    case "boolean":
      return typeof v === "string" ? v === "1" || v.toLowerCase() === "true" : Boolean(Number(v));
    case "bytea":
      return typeof v === "string" ? new TextEncoder().encode(v) : v;
    default:
      // text (JSON is kept as text on both backends). U+0000, which PostgreSQL's text cannot hold, becomes
      // U+FFFD in the driver, as for every value svc writes there.
      if (v instanceof Uint8Array) return new TextDecoder().decode(v);
      if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
      return v;
  }
}

/** Rows per INSERT: well under PostgreSQL's 65,535 parameters, and batches of big values (screenshots) kept small. */
const MAX_PARAMETERS = 30_000;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

function sizeOf(row: Record<string, unknown>): number {
  let n = 0;
  for (const v of Object.values(row)) n += v instanceof Uint8Array ? v.byteLength : typeof v === "string" ? v.length : 8;
  return n;
}

/**
 * Copies every table of `sqlite` into `target` (migrated to the same version, every table empty) in one
 * transaction, then counts each table on both sides; any difference rolls the whole copy back.
 */
export async function copySqliteIntoPostgres(
  sqlite: Database,
  target: Kysely<DB>,
  onTable: (count: TableCount) => void = () => undefined,
): Promise<TableCount[]> {
  const tables = tablesInDependencyOrder(sqlite);
  return target.transaction().execute(async (trx) => {
    const columns = await sql<{ table_name: string; column_name: string; data_type: string }>`
      select table_name, column_name, data_type from information_schema.columns where table_schema = current_schema()`.execute(trx);
    const typeOf = new Map(columns.rows.map((c) => [`${c.table_name}.${c.column_name}`, c.data_type]));
    const counted = async (t: string) => (await sql<{ n: number }>`select count(*) as n from ${sql.table(t)}`.execute(trx)).rows[0]?.n ?? 0;
    for (const t of tables) {
      if (!columns.rows.some((c) => c.table_name === t)) throw new CopyError(`the PostgreSQL database has no table ${t}: it is not at the same migration`);
    }
    // The target was empty before its migrations ran (whyNotEmpty): rows now present are ones the migrations wrote
    // themselves, and the source holds its own of them.
    for (const t of [...tables].reverse()) await sql`delete from ${sql.table(t)}`.execute(trx);
    const counts: TableCount[] = [];
    for (const t of tables) {
      let batch: Record<string, unknown>[] = [];
      let bytes = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        await trx
          .insertInto(t as keyof DB)
          .values(batch as never)
          .execute();
        batch = [];
        bytes = 0;
      };
      for (const row of sqlite.query<Record<string, unknown>, []>(`SELECT * FROM "${t}"`).iterate()) {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(row)) {
          const type = typeOf.get(`${t}.${k}`);
          if (type === undefined) throw new CopyError(`the PostgreSQL table ${t} has no column ${k}: it is not at the same migration`);
          out[k] = convert(v, type);
        }
        batch.push(out);
        bytes += sizeOf(out);
        if ((batch.length + 1) * Object.keys(out).length > MAX_PARAMETERS || bytes > MAX_BATCH_BYTES) await flush();
      }
      await flush();
      const count = { table: t, sqlite: sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM "${t}"`).get()?.n ?? 0, postgres: await counted(t) };
      counts.push(count);
      onTable(count);
    }
    const wrong = counts.filter((c) => c.sqlite !== c.postgres);
    if (wrong.length > 0)
      throw new CopyError(`the counts differ after the copy (${wrong.map((c) => `${c.table}: ${c.sqlite} → ${c.postgres}`).join(", ")}); nothing was kept`);
    return counts;
  });
}
