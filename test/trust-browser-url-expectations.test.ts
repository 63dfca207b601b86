// An expected page URL is exact or a path (query and #fragment as written); a regular expression only as
// {"matches": …}; the Gherkin phrase is exact; and a migration keeps the meaning of saved /…/ expectations.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openDatabase } from "../src/db/database";
import { automationsOf, createFeature, generate } from "./helpers/gen-flow";
import { createAutomation, json, projectWithEnv, type RunRecord, runToEnd, waitForRun } from "./helpers/runs";
import { databaseBefore } from "./helpers/old-database";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

let s: TestServer;
let project: string;
let target: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(async () => {
  target = Bun.serve({
    port: 0,
    fetch: () => new Response("<!doctype html><title>page</title><p>a page</p>", { headers: { "content-type": "text/html" } }),
  });
  base = `http://127.0.0.1:${target.port}`;
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project } = await projectWithEnv(s, "url expectations", { BASE_URL: base }));
}, 30_000);

afterAll(async () => {
  await s.stop();
  target.stop(true);
});

const browser = (steps: unknown[]) => ({ name: `e-${crypto.randomUUID().slice(0, 8)}`, kind: "browser", environment: "test", steps });
const outcomes = (run: RunRecord) => run.steps.map((x) => `${x.status} ${x.name}${x.status === "passed" ? "" : `: ${x.message}`}`);

/** Runs one expectation per automation on the page `path`, all at once; the status of each. */
async function expectOn(path: string, urls: unknown[]): Promise<string[]> {
  const ids = await Promise.all(urls.map((url) => createAutomation(s, project, browser([{ goto: path }, { expect: { url }, timeout_ms: 300 }]))));
  const runs = await Promise.all(
    ids.map(async (id) => {
      const r = await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations/${id}/run`, {}), 202);
      return waitForRun(s, project, r.id, 60_000);
    }),
  );
  return runs.map((r) => r.steps[1]?.status ?? "none");
}

describe("expected URLs", () => {
  test("a path is not a pattern: /dashboard/ does not pass on /x/?next=/dashboard/", async () => {
    const run = await runToEnd(s, project, browser([{ goto: "/x/?next=/dashboard/" }, { expect: { url: "/dashboard/" }, timeout_ms: 300 }]));
    expect(run.steps[1]?.status).toBe("failed");
    expect(run.steps[1]?.message).toBe(`url: expected /dashboard/, got ${base}/x/?next=/dashboard/`);
  }, 60_000);

  test("a path ignores the query unless it has ?, and the #fragment unless it has #; an absolute URL is exact", async () => {
    const on = "/dashboard?tab=2#top";
    const got = await expectOn(on, [
      "/dashboard",
      "/dashboard?tab=2",
      "/dashboard#top",
      "/dashboard?tab=2#top",
      `${base}/dashboard?tab=2#top`,
      "/dashboard/",
      "/dashboard?tab=3",
      "/dashboard?tab=2&x=1",
      "/dashboard#bottom",
      "/dash",
      `${base}/dashboard?tab=2`,
      `${base}/dashboard`,
    ]);
    expect(got).toEqual(["passed", "passed", "passed", "passed", "passed", "failed", "failed", "failed", "failed", "failed", "failed", "failed"]);
  }, 60_000);

  test('a regular expression is written {"matches": …} and runs on the linear engine; wait_for.url follows the same rules', async () => {
    const run = await runToEnd(
      s,
      project,
      browser([
        { goto: "/items/42?sort=asc" },
        { expect: { url: { matches: "^http://127\\.0\\.0\\.1:\\d+/items/\\d+\\?sort=asc$" } } },
        { wait_for: { url: "/items/42" } },
        { wait_for: { url: { matches: "/items/\\d+" } } },
        { expect: { url: { matches: "/users/\\d+" } }, timeout_ms: 300 },
      ]),
    );
    expect(outcomes(run)).toEqual([
      `passed goto /items/42?sort=asc`,
      "passed expect url matching /^http://127\\.0\\.0\\.1:\\d+/items/\\d+\\?sort=asc$/",
      'passed wait for url "/items/42"',
      "passed wait for url matching //items/\\d+/",
      `failed expect url matching //users/\\d+/: url: expected a match of //users/\\d+/, got ${base}/items/42?sort=asc`,
    ]);
  }, 60_000);

  test('the Gherkin phrase "the URL should be" is exact', async () => {
    const feature = await createFeature(s, project, {
      name: "Dashboard",
      acceptance_criteria: 'Scenario: lands on the dashboard\n  Given I open "/x/?next=/dashboard/"\n  Then the URL should be "/dashboard/"\n',
    });
    const g = await generate(s, project, feature, "gherkin");
    const [draft] = await automationsOf(s, project, g);
    expect(draft?.steps).toEqual([{ goto: "/x/?next=/dashboard/" }, { expect: { url: "/dashboard/" } }]);
    const run = await runToEnd(s, project, { ...browser(draft?.steps ?? []) });
    expect(run.steps[1]?.status).toBe("failed");
  }, 60_000);
});

describe("migration 0003_url_expectations", () => {
  test("saved /…/ expectations (and queued runs' snapshots) become {matches: …}; paths and finished runs stay as they were", async () => {
    const dir = tempDir("svc-migrate-urls-");
    try {
      // A database at the shape before the migration: every earlier migration applied, steps stored as then.
      await databaseBefore(`${dir}/svc.sqlite`, "0003");
      const sqlite = new Database(`${dir}/svc.sqlite`);
      const now = new Date().toISOString();
      sqlite.run("INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ('wsp_1', 'w', 'w', ?, ?)", [now, now]);
      sqlite.run(
        "INSERT INTO projects (id, workspace_id, name, slug, description, openapi, created_at, updated_at) VALUES ('prj_1', 'wsp_1', 'p', 'p', '', NULL, ?, ?)",
        [now, now],
      );
      const oldSteps = [
        { goto: "/login" },
        { expect: { url: "/dashboard/" } },
        { wait_for: { url: "/items\\/\\d+/i" } },
        { expect: { url: "/plain/path" } },
        { expect: { url: "/not(valid/" } },
        { expect: { text: "/looks/like/a/pattern/" } },
      ];
      sqlite.run(
        "INSERT INTO automations (id, project_id, name, description, kind, steps, tags, status, source, timeout_ms, retries, created_at, updated_at) VALUES ('aut_1', 'prj_1', 'a', '', 'browser', ?, '[]', 'active', 'manual', 1000, 0, ?, ?)",
        [JSON.stringify(oldSteps), now, now],
      );
      const spec = (steps: unknown) => JSON.stringify({ kind: "browser", steps, timeout_ms: 1000, retries: 0 });
      for (const [id, status] of [
        ["run_queued", "queued"],
        ["run_done", "passed"],
      ]) {
        sqlite.run(
          "INSERT INTO runs (id, project_id, automation_id, automation_name, trigger, status, spec, attempts, summary, results, created_at, updated_at) VALUES (?, 'prj_1', 'aut_1', 'a', 'api', ?, ?, '[]', '{}', '[]', ?, ?)",
          [id as string, status as string, spec(oldSteps), now, now],
        );
      }
      sqlite.close();

      const migrated = await openDatabase(dir);
      await migrated.close();
      const after = new Database(`${dir}/svc.sqlite`, { readonly: true });
      const steps = JSON.parse((after.query("SELECT steps FROM automations WHERE id = 'aut_1'").get() as { steps: string }).steps);
      const newSteps = [
        { goto: "/login" },
        { expect: { url: { matches: "dashboard" } } },
        { wait_for: { url: { matches: "(?i)items\\/\\d+" } } },
        { expect: { url: "/plain/path" } },
        { expect: { url: "/not(valid/" } },
        { expect: { text: "/looks/like/a/pattern/" } },
      ];
      expect(steps).toEqual(newSteps);
      const specOf = (id: string) => JSON.parse((after.query("SELECT spec FROM runs WHERE id = ?").get(id) as { spec: string }).spec).steps;
      expect(specOf("run_queued")).toEqual(newSteps);
      expect(specOf("run_done")).toEqual(oldSteps);
      after.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
