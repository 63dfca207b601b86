// Upgrading a database that has twin automation or group names: migration 0010_cockpit renames the later ones
// "name (2)", "name (3)", … once (the oldest keeps its name; a taken suffix is skipped), the start logs each
// rename, and from then on the names are unique in each project (also to a generation).
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { openCore } from "../src/core";
import { flushLogs, setLogLevel } from "../src/logging";
import { automationsOf, createFeature, createProject, generate } from "./helpers/gen-flow";
import { SHOP_CRITERIA } from "./helpers/gen-target-app";
import { databaseBefore } from "./helpers/old-database";
import { startTestServer, tempDir } from "./helpers/server";

/** The SQLite handle of a core opened on a data directory (this file's databases are SQLite files). */
function sqliteOf(core: { sqlite?: import("bun:sqlite").Database } | undefined): import("bun:sqlite").Database {
  if (!core?.sqlite) throw new Error("expected a core opened on SQLite");
  return core.sqlite;
}

const dir = tempDir("svc-unique-names-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("existing duplicates are renamed name (2), … once and logged; a new twin is then refused by the database itself", async () => {
  const file = join(dir, "svc.sqlite");
  await databaseBefore(file, "0010");
  const raw = new Database(file);
  const t = "2026-01-01T00:00:00.000Z";
  raw.run("INSERT INTO workspaces (id, slug, name, created_at, updated_at) VALUES ('ws_1', 'acme', 'acme', ?1, ?1)", [t]);
  for (const p of ["prj_1", "prj_2"]) {
    raw.run("INSERT INTO projects (id, workspace_id, slug, name, description, openapi, created_at, updated_at) VALUES (?1, 'ws_1', ?1, ?1, '', NULL, ?2, ?2)", [
      p,
      t,
    ]);
  }
  const automation = (id: string, project: string, name: string, at: string) =>
    raw.run(
      `INSERT INTO automations (id, project_id, feature_id, generation_id, name, description, kind, steps, environment_id, tags, status, source, edited,
        timeout_ms, retries, last_run_id, last_run_status, last_run_at, created_at, updated_at)
       VALUES (?1, ?2, NULL, NULL, ?3, '', 'http', '[]', NULL, '[]', 'active', 'manual', 0, 30000, 0, NULL, NULL, NULL, ?4, ?4)`,
      [id, project, name, at],
    );
  automation("aut_1", "prj_1", "login", "2026-01-01T00:00:01.000Z");
  automation("aut_2", "prj_1", "login", "2026-01-01T00:00:02.000Z");
  automation("aut_3", "prj_1", "login (2)", "2026-01-01T00:00:03.000Z");
  automation("aut_4", "prj_1", "login", "2026-01-01T00:00:04.000Z");
  automation("aut_5", "prj_2", "login", "2026-01-01T00:00:05.000Z");
  for (const [id, at] of [
    ["grp_1", "2026-01-01T00:00:01.000Z"],
    ["grp_2", "2026-01-01T00:00:02.000Z"],
  ]) {
    raw.run("INSERT INTO groups (id, project_id, name, description, automation_ids, created_at, updated_at) VALUES (?1, 'prj_1', 'smoke', '', '[]', ?2, ?2)", [
      id ?? "",
      at ?? "",
    ]);
  }
  raw.close();

  const logged: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    logged.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  setLogLevel("warn");
  let core: Awaited<ReturnType<typeof openCore>> | undefined;
  try {
    core = await openCore(loadConfig({ env: {}, flags: { data_dir: dir, log_level: "warn" } }));
    flushLogs();
  } finally {
    process.stderr.write = write;
  }
  try {
    const names = sqliteOf(core).query<{ id: string; name: string }, []>("SELECT id, name FROM automations ORDER BY id").all();
    expect(names).toEqual([
      { id: "aut_1", name: "login" },
      { id: "aut_2", name: "login (3)" },
      { id: "aut_3", name: "login (2)" },
      { id: "aut_4", name: "login (4)" },
      { id: "aut_5", name: "login" },
    ]);
    const groups = sqliteOf(core).query<{ id: string; name: string }, []>("SELECT id, name FROM groups ORDER BY id").all();
    expect(groups).toEqual([
      { id: "grp_1", name: "smoke" },
      { id: "grp_2", name: "smoke (2)" },
    ]);
    const text = logged.join("");
    expect(text).toContain('renamed a duplicate automation name: \\"login\\" is now \\"login (3)\\"');
    expect(text).toContain('renamed a duplicate group name: \\"smoke\\" is now \\"smoke (2)\\"');
    expect(() => sqliteOf(core).run("UPDATE automations SET name = 'login' WHERE id = 'aut_2'")).toThrow(/UNIQUE/);
  } finally {
    await core?.close();
  }
  // Opened again: nothing left to rename, nothing logged.
  const again = await openCore(loadConfig({ env: {}, flags: { data_dir: dir, log_level: "warn" } }));
  expect(sqliteOf(again).query<{ name: string }, []>("SELECT name FROM automations WHERE id = 'aut_4'").get()?.name).toBe("login (4)");
  await again.close();
});

test("a generation never makes a twin: a name taken by another automation gets a suffix; its own unedited drafts are replaced, not suffixed", async () => {
  const t = await startTestServer({ rate_limit: { enabled: false } });
  try {
    const project = await createProject(t, "gen");
    const steps = [{ request: { url: "http://127.0.0.1:9/" } }];
    expect((await t.call("POST", `/projects/${project}/automations`, { name: "Sign in works", kind: "http", steps })).status).toBe(201);
    const feature = await createFeature(t, project, { name: "Shop basics", acceptance_criteria: SHOP_CRITERIA });
    const first = await generate(t, project, feature);
    expect(first.status).toBe("succeeded");
    const names = (await automationsOf(t, project, first)).map((a) => a.name);
    expect(names).toContain("Sign in works (2)");
    const again = await generate(t, project, feature);
    expect((await automationsOf(t, project, again)).map((a) => a.name)).toEqual(names);
    const all = (await (await t.call("GET", `/projects/${project}/automations?limit=200`)).json()) as { data: { name: string }[] };
    expect(new Set(all.data.map((a) => a.name)).size).toBe(all.data.length);
  } finally {
    await t.stop();
  }
});
