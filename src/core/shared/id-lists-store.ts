// Id lists in the hot statements of the stores (a finished batch's runs, a group run's automations).
import { type Kysely, type RawBuilder, type SqlBool, sql } from "kysely";
import { sqlDialect } from "../storage";

/**
 * `column IN (values)` for the hot statements that take many ids (a batch of finished runs, a group run's
 * automations). On SQLite the list is one bound JSON array read with json_each: the statement's text is the same
 * whatever the count, so SQLite compiles it once, and the query builder makes no node per id (both cost more than
 * the lookups). PostgreSQL gets the plain list. Callers skip the query when `values` is empty.
 */
export function oneOf<T>(db: Kysely<T>, column: string, values: readonly string[]): RawBuilder<SqlBool> {
  if (sqlDialect(db) === "postgres") return sql<SqlBool>`${sql.ref(column)} in (${sql.join(values)})`;
  return sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${JSON.stringify(values)}))`;
}
