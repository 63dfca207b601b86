// `svc admin migrate-to-postgres --from DATA_DIR`, whatever SVC_TEST_BACKEND says: an SQLite installation made
// through the API (projects, environments with secrets, automations, runs with steps, a screenshot, members and
// their keys) is copied into an empty PostgreSQL database, verified by counts; a server on PostgreSQL with the
// same secrets key reads it all back, its keys work and its secrets still decrypt in a run. A database that is
// not empty is refused and left as it was.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { sourceCli } from "./helpers/cli-source";
import { freshDatabaseUrl } from "./helpers/postgres";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { runSql, startTestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(120_000);

let target: TargetApp;
const dirs: string[] = [];
beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Page<T> = { data: T[]; next_cursor: string | null };

test("an SQLite installation copied into PostgreSQL is read back whole by a server on PostgreSQL", async () => {
  const sqliteDir = tempDir("svc-migrate-from-");
  dirs.push(sqliteDir);
  // SQLite whatever the test backend: database.url unset.
  const s = await startTestServer({ rate_limit: { enabled: false }, data_dir: sqliteDir, database: { url: undefined } });
  let project = "";
  let automationId = "";
  let browserRun = { id: "", artifacts: [] as string[] };
  let httpRunId = "";
  let shot = new Uint8Array();
  let member = { key: "", userId: "" };
  try {
    expect(s.databaseUrl).toBeUndefined();
    const made = await projectWithEnv(s, "Shop one", { BASE_URL: target.url }, { TOKEN: "tok-7f3a9" });
    project = made.project;
    // A name stored before names refused control characters: PostgreSQL text cannot hold U+0000.
    await s.sql("UPDATE projects SET name = ? WHERE slug = ?", "Shop \u0000 one", project);
    automationId = await createAutomation(s, project, {
      name: "with token",
      kind: "http",
      environment: made.envId,
      steps: [{ request: { url: "/health", headers: { "x-token": "{{TOKEN}}" } } }, { request: { url: "/items" }, expect: [{ status: 200 }] }],
    });
    const httpRun = await waitForRun(s, project, await startRun(s, project, automationId));
    expect(httpRun.status).toBe("passed");
    httpRunId = httpRun.id;
    const browserId = await createAutomation(s, project, {
      name: "home",
      kind: "browser",
      environment: made.envId,
      steps: [{ goto: "/login" }, { screenshot: "login" }],
    });
    browserRun = (await waitForRun(s, project, await startRun(s, project, browserId), 90_000)) as unknown as typeof browserRun;
    expect(browserRun.artifacts.length).toBe(1);
    shot = new Uint8Array(await (await s.call("GET", `/projects/${project}/runs/${browserRun.id}/artifacts/${browserRun.artifacts[0]}`)).arrayBuffer());
    member = await s.userWithKey("member@acme.test", "acme", "member");
  } finally {
    await s.server.stop();
  }

  const url = await freshDatabaseUrl();
  const cli = sourceCli({ SVC_DATABASE_URL: url });
  const pgDir = tempDir("svc-migrate-to-");
  dirs.push(pgDir);
  try {
    const r = await cli.run(["admin", "migrate-to-postgres", "--from", sqliteDir]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    // The counts per table, printed; and where the secrets key is.
    expect(r.stdout).toMatch(/\nprojects +1 +1\n/);
    expect(r.stdout).toMatch(/\nruns +2 +2\n/);
    expect(r.stdout).toMatch(/\nrun_artifacts +1 +1\n/);
    expect(r.stdout).toMatch(/\nmemberships +2 +2\n/);
    expect(r.stdout).toContain("the counts match");
    expect(r.stdout).toContain(`the secrets key must travel too: copy ${join(sqliteDir, "secrets.key")}`);

    // Copying again: the database is not empty any more.
    const again = await cli.run(["admin", "migrate-to-postgres", "--from", sqliteDir]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("is not empty");
    expect(again.stderr).toMatch(/\d+ rows in projects/);

    // A database holding another application's table is refused before anything is created in it.
    const other = await freshDatabaseUrl();
    await runSql(other, "", "CREATE TABLE other_app (x integer)", []);
    const otherCli = sourceCli({ SVC_DATABASE_URL: other });
    const refused = await otherCli.run(["admin", "migrate-to-postgres", "--from", sqliteDir]);
    otherCli.remove();
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("is not empty (it holds table other_app)");
    expect(await runSql(other, "", "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()", [])).toEqual([
      { table_name: "other_app" },
    ]);

    const pg = await startServer(
      loadConfig({
        env: {},
        flags: {
          port: 0,
          data_dir: pgDir,
          log_level: "warn",
          "database.url": url,
          "secrets.key_file": join(sqliteDir, "secrets.key"),
          "rate_limit.enabled": false,
        },
      }),
    );
    try {
      const api = `${pg.url}/api/v1/ops`;
      const get = (path: string, key = s.key) => fetch(`${api}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const p = await json<{ name: string }>(await get(`/projects/${project}`));
      expect(p.name).toBe("Shop \uFFFD one");
      const runs = await json<Page<{ id: string }>>(await get(`/projects/${project}/runs`));
      expect(runs.data.map((x) => x.id).sort()).toEqual([httpRunId, browserRun.id].sort());
      const old = await json<{ status: string; steps: unknown[] }>(await get(`/projects/${project}/runs/${httpRunId}`));
      expect(old.status).toBe("passed");
      expect(old.steps.length).toBe(2);
      const art = await get(`/projects/${project}/runs/${browserRun.id}/artifacts/${browserRun.artifacts[0]}`);
      expect(art.status).toBe(200);
      expect(new Uint8Array(await art.arrayBuffer())).toEqual(shot);
      // The member's key works, and the members are there.
      const me = await json<{ user: { email: string } }>(await get("/me", member.key));
      expect(me.user.email).toBe("member@acme.test");
      const members = await json<{ data: { email: string }[] }>(await get("/members"));
      expect(members.data.map((m) => m.email).sort()).toEqual(["member@acme.test", "owner@acme.test"]);

      // A new run on PostgreSQL: the secret copied from SQLite decrypts, and the new run is listed after the old ones.
      const seen = target.seen.length;
      const started = await fetch(`${api}/projects/${project}/automations/${automationId}/run`, {
        method: "POST",
        headers: { authorization: `Bearer ${s.key}` },
      });
      const fresh = await json<{ id: string }>(started, 202);
      let run = { status: "queued" };
      for (const until = Date.now() + 30_000; Date.now() < until && ["queued", "running"].includes(run.status); await Bun.sleep(50)) {
        run = await json(await get(`/projects/${project}/runs/${fresh.id}`));
      }
      expect(run.status).toBe("passed");
      expect(target.seen.slice(seen).find((x) => x.path === "/health")?.headers["x-token"]).toBe("tok-7f3a9");
      const after = await json<Page<{ id: string }>>(await get(`/projects/${project}/runs`));
      expect(after.data[0]?.id).toBe(fresh.id);
      expect(after.data.length).toBe(3);
    } finally {
      await pg.stop();
    }
  } finally {
    cli.remove();
  }
});
