// Cursor pagination over (created_at, id), newest first. The cursor is opaque to clients.
import { sql, type RawBuilder, type SelectQueryBuilder } from "kysely";
import type { DB } from "../../db/schema";
import { invalid } from "../../manifest/errors";

interface CursorPosition {
  t: string;
  id: string;
}

export function encodeCursor(row: { created_at: string; id: string }): string {
  return Buffer.from(JSON.stringify({ t: row.created_at, id: row.id })).toString("base64url");
}

/** What a cursor's parts are when svc wrote them: a stored time (ISO 8601) and a record id. */
const CURSOR_TIME = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d(?::?\d\d)?)?$/;
const CURSOR_ID = /^[A-Za-z0-9_-]{1,100}$/;

function decodeCursor(cursor: string): CursorPosition {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Partial<CursorPosition> | null;
    // Only what encodeCursor writes: a hand-made one may carry anything (a NUL, which PostgreSQL's text refuses).
    if (typeof v?.t === "string" && typeof v.id === "string" && CURSOR_TIME.test(v.t) && CURSOR_ID.test(v.id)) return { t: v.t, id: v.id };
  } catch {
    // fall through to the error below
  }
  // Named as every query parameter is (query.limit, query.status …).
  throw invalid("cursor is not valid: pass the next_cursor of a previous page", [{ path: "query.cursor", message: "invalid cursor" }]);
}

/** A WHERE condition selecting the rows after the cursor in (created_at DESC, id DESC) order. */
export function afterCursor(
  table: string,
  cursor: string | undefined,
  columns: { createdAt: string; id: string } = { createdAt: `${table}.created_at`, id: `${table}.id` },
): RawBuilder<boolean> {
  if (!cursor) return sql<boolean>`1 = 1`;
  const c = decodeCursor(cursor);
  const t = sql.ref(columns.createdAt);
  const id = sql.ref(columns.id);
  return sql<boolean>`(${t} < ${c.t} OR (${t} = ${c.t} AND ${id} < ${c.id}))`;
}

/** Given up to limit+1 rows, the page and its next cursor. */
export function toPage<R extends { created_at: string; id: string }, T>(rows: R[], limit: number, map: (r: R) => T) {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const last = kept[kept.length - 1];
  return { data: kept.map(map), next_cursor: more && last ? encodeCursor(last) : null };
}

/** Fetches one page of a listing, newest first, and returns it with its next cursor. */
export async function fetchPage<D extends DB, TB extends keyof D, O extends { created_at: string; id: string }, T>(
  qb: SelectQueryBuilder<D, TB, O>,
  table: string,
  query: { limit: number; cursor?: string },
  map: (row: O) => T,
) {
  const rows = await qb
    .where(afterCursor(table, query.cursor))
    .orderBy(sql.ref(`${table}.created_at`), "desc")
    .orderBy(sql.ref(`${table}.id`), "desc")
    .limit(query.limit + 1)
    .execute();
  return toPage(rows as O[], query.limit, map);
}
