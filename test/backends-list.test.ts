// scripts/backends.ts names the files that run again on PostgreSQL and those that are SQLite-only: both lists name
// existing test files, and none is in both.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { POSTGRES, QUIET, SQLITE_ONLY } from "../scripts/backends";

const ROOT = join(import.meta.dir, "..");

test("the backend lists name existing test files, each once, and every SQLite-only file says why", () => {
  const sqliteOnly = Object.keys(SQLITE_ONLY);
  for (const f of [...POSTGRES, ...sqliteOnly]) expect({ f, exists: existsSync(join(ROOT, f)) }).toEqual({ f, exists: true });
  expect(new Set(POSTGRES).size).toBe(POSTGRES.length);
  expect(POSTGRES.filter((f) => sqliteOnly.includes(f))).toEqual([]);
  for (const [f, why] of Object.entries(SQLITE_ONLY)) expect({ f, reason: why.length > 10 }).toEqual({ f, reason: true });
});

test("the files run one at a time exist, each named once", () => {
  for (const f of QUIET) expect({ f, exists: existsSync(join(ROOT, f)) }).toEqual({ f, exists: true });
  expect(new Set(QUIET).size).toBe(QUIET.length);
});
