// The storage seam: only src/db and src/core (and the wiring in src/main.ts and src/server.ts) may reach the
// database, so a second dialect or a change of schema touches nothing else.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const SCANNED = ["src", "cli", "mcp", "config", "bin", "scripts"];
const ALLOWED_DIRS = ["src/db/", "src/core/"];
const ALLOWED_FILES = new Set(["src/main.ts", "src/server.ts"]);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx|js|mjs)$/.test(name)) out.push(path);
  }
  return out;
}

/** Every module a file names: static imports and re-exports, side-effect imports, import() and require(). */
function specifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)/g,
  ];
  for (const p of patterns) for (const m of text.matchAll(p)) if (m[1]) found.push(m[1]);
  return found;
}

/** Why `spec`, named in `file` (relative to the root), reaches the database; null when it does not. */
function databaseReach(file: string, spec: string): string | null {
  if (spec === "kysely" || spec.startsWith("kysely/")) return `imports ${spec}`;
  if (spec === "bun:sqlite") return "imports bun:sqlite";
  if (!spec.startsWith(".")) return null;
  const target = relative(ROOT, resolve(ROOT, dirname(file), spec)).replaceAll("\\", "/");
  return target === "src/db" || target.startsWith("src/db/") ? `imports ${spec} (${target})` : null;
}

function violations(files: { path: string; text: string }[]): string[] {
  const out: string[] = [];
  for (const { path, text } of files) {
    if (ALLOWED_FILES.has(path) || ALLOWED_DIRS.some((d) => path.startsWith(d))) continue;
    for (const spec of specifiers(text)) {
      const why = databaseReach(path, spec);
      if (why) out.push(`${path} ${why}`);
    }
  }
  return out;
}

test("no file outside src/db and src/core (but the wiring in src/main.ts and src/server.ts) imports kysely, bun:sqlite or src/db", () => {
  const files = SCANNED.flatMap((d) => sourceFiles(join(ROOT, d))).map((abs) => ({
    path: relative(ROOT, abs).replaceAll("\\", "/"),
    text: readFileSync(abs, "utf8"),
  }));
  expect(files.length).toBeGreaterThan(100);
  expect(violations(files)).toEqual([]);
});

test("the boundary check sees every way of importing, and lets the core and the wiring through", () => {
  const planted = [
    { path: "src/http/a.ts", text: 'import type { Db } from "../db/database";' },
    { path: "src/http/operations/b.ts", text: 'const { migrations } = await import("../../db/migrations");' },
    { path: "src/commands/c.ts", text: 'import { Database } from "bun:sqlite";' },
    { path: "cli/d.ts", text: 'export { sql } from "kysely";' },
    { path: "mcp/e.ts", text: 'import "kysely/migration";' },
    { path: "src/core/ok.ts", text: 'import { sql } from "kysely";' },
    { path: "src/server.ts", text: 'import { openDatabase } from "./db/database";' },
    { path: "src/http/fine.ts", text: 'import { readiness } from "../core/health"; import "./dbx";' },
  ];
  expect(violations(planted)).toEqual([
    "src/http/a.ts imports ../db/database (src/db/database)",
    "src/http/operations/b.ts imports ../../db/migrations (src/db/migrations)",
    "src/commands/c.ts imports bun:sqlite",
    "cli/d.ts imports kysely",
    "mcp/e.ts imports kysely/migration",
  ]);
});

/** Keyset paging: the one query helper stores' listings share (it adds the cursor, order and limit to their query). */
const PAGINATION = "src/core/shared/pagination.ts";

/** Where a file of src/core builds SQL itself: the query builder's entry points or the sql tag. */
function queriesBuilt(files: { path: string; text: string }[]): string[] {
  const out: string[] = [];
  const builds = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(|\bsql\s*`|\bsql\.(raw|ref|table|id|lit)\s*\(/g;
  for (const { path, text } of files) {
    if (!path.startsWith("src/core/") || /(^|\/)([a-z-]+-)?store\.ts$/.test(path) || path === PAGINATION) continue;
    for (const m of text.matchAll(builds)) out.push(`${path}: ${m[0]}`);
  }
  return out;
}

test("inside src/core, only a resource's store.ts builds queries: operations hold the rules", () => {
  const files = sourceFiles(join(ROOT, "src/core")).map((abs) => ({ path: relative(ROOT, abs).replaceAll("\\", "/"), text: readFileSync(abs, "utf8") }));
  expect(files.filter((f) => f.path.endsWith("/store.ts")).length).toBeGreaterThanOrEqual(10);
  expect(queriesBuilt(files)).toEqual([]);
});

test("the query check sees the builder and the sql tag outside a store, and lets stores through", () => {
  const planted = [
    { path: "src/core/features/operations.ts", text: 'await ctx.core.db.selectFrom("features").selectAll().execute();' },
    { path: "src/core/runs/queue.ts", text: "await sql`UPDATE runs SET x = 1`.execute(db);" },
    { path: "src/core/groups/operations.ts", text: "trx\n  .updateTable('groups')" },
    { path: "src/core/features/store.ts", text: 'db.selectFrom("features")' },
    { path: "src/core/shared/idempotency-store.ts", text: 'db.insertInto("idempotency_keys")' },
    { path: "src/core/features/rules.ts", text: "const selectFromList = (xs: string[]) => xs[0];" },
  ];
  expect(queriesBuilt(planted)).toEqual([
    "src/core/features/operations.ts: .selectFrom(",
    "src/core/runs/queue.ts: sql`",
    "src/core/groups/operations.ts: .updateTable(",
  ]);
});
