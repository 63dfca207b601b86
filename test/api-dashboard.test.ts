// get_dashboard: the workspace at a glance in one read — per project the automations passing, flaky, failing and
// without a verdict (as their own health says), what is queued and running, and the latest runs — only the
// caller's workspace, for any member; the same through the CLI.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

interface DashboardProject {
  id: string;
  slug: string;
  name: string;
  automations: number;
  passing: number;
  flaky: number;
  failing: number;
  without_verdict: number;
  queued: number;
  running: number;
}
interface Dashboard {
  projects: DashboardProject[];
  more_projects: boolean;
  recent_runs: { id: string; project_id: string; automation_name: string; status: string; created_at: string }[];
}

let s: TestServer;
let target: TargetApp;
let cli: SourceCli;
let shop: string;
let blog: string;

const http = (name: string, url: string, expectStatus = 200, extra: Record<string, unknown> = {}) => ({
  name,
  kind: "http",
  environment: "test",
  steps: [{ request: { url }, expect: [{ status: expectStatus }] }],
  ...extra,
});

async function ran(project: string, body: Record<string, unknown>): Promise<string> {
  const id = await createAutomation(s, project, body);
  await waitForRun(s, project, await startRun(s, project, id));
  return id;
}

const dashboard = async (key?: string) => json<Dashboard>(await s.call("GET", "/dashboard", undefined, key));
const tile = (d: Dashboard, slug: string) => d.projects.find((p) => p.slug === slug) as DashboardProject;

beforeAll(async () => {
  target = startTargetApp();
  s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 4 } });
  shop = (await projectWithEnv(s, "Shop", { BASE_URL: target.url })).project;
  blog = (await projectWithEnv(s, "Blog", { BASE_URL: target.url })).project;
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key });
  await ran(shop, http("passes", "/items/1"));
  await ran(shop, http("fails", "/items/1", 201));
  await createAutomation(s, shop, http("never ran", "/items/1"));
  const off = await ran(shop, http("disabled", "/items/1", 201));
  await json(await s.call("PATCH", `/projects/${shop}/automations/${off}`, { status: "disabled" }));
  // Passes only after a retry: flaky.
  await ran(blog, http("flaky", `/flaky/${crypto.randomUUID()}?fail=1`, 200, { retries: 1 }));
});
afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop();
});

describe("get_dashboard", () => {
  test("counts each project's automations by their health, disabled ones left out, as list_automations reads them", async () => {
    const d = await dashboard();
    expect(d.more_projects).toBe(false);
    expect(d.projects.map((p) => p.slug).sort()).toEqual([blog, shop].sort());
    expect(tile(d, shop)).toMatchObject({ name: "Shop", automations: 3, passing: 1, flaky: 0, failing: 1, without_verdict: 1, queued: 0, running: 0 });
    expect(tile(d, blog)).toMatchObject({ name: "Blog", automations: 1, passing: 0, flaky: 1, failing: 0, without_verdict: 0 });
    // The same states the automations themselves show.
    for (const project of [shop, blog]) {
      const listed = await json<{ data: { status: string; health: { state: string } }[] }>(await s.call("GET", `/projects/${project}/automations?limit=200`));
      const states = listed.data.filter((a) => a.status !== "disabled").map((a) => a.health.state);
      const t = tile(d, project);
      expect([t.passing, t.flaky, t.failing, t.without_verdict]).toEqual(
        ["passing", "flaky", "failing", "unknown"].map((x) => states.filter((y) => y === x).length),
      );
    }
  });

  test("the latest runs of the workspace, newest first, at most 10; what is queued and running counts live", async () => {
    const before = await dashboard();
    expect(before.recent_runs.map((r) => r.automation_name)).toEqual(["flaky", "disabled", "fails", "passes"]);
    const key = crypto.randomUUID();
    const held = await createAutomation(s, shop, http("held", `/hold/${key}?ms=0`));
    const runs: string[] = [];
    try {
      // Four slots: four runs hold at the target (each started once the one before runs), four more wait queued.
      let now = await dashboard();
      for (let i = 0; i < 4; i++) {
        runs.push(await startRun(s, shop, held));
        for (const until = Date.now() + 10_000; tile(now, shop).running < i + 1 && Date.now() < until; now = await dashboard()) await Bun.sleep(20);
      }
      for (let i = 0; i < 4; i++) runs.push(await startRun(s, shop, held));
      now = await dashboard();
      expect(tile(now, shop)).toMatchObject({ running: 4, queued: 4 });
      expect(tile(now, blog)).toMatchObject({ running: 0, queued: 0 });
      expect(now.recent_runs).toHaveLength(10);
      // Runs started within the same millisecond have no order between them: the set, then the order by time.
      expect(new Set(now.recent_runs.slice(0, 8).map((r) => r.id))).toEqual(new Set(runs));
      const times = now.recent_runs.map((r) => r.created_at);
      expect([...times].sort().reverse()).toEqual(times);
    } finally {
      target.release(key);
    }
    for (const id of runs) await waitForRun(s, shop, id);
    expect(tile(await dashboard(), shop)).toMatchObject({ running: 0, queued: 0, passing: 2 });
  });

  test("only the caller's workspace, for a member too; the CLI prints it", async () => {
    const other = await s.userWithKey("owner@other.test", "other", "owner");
    await json(await s.call("POST", "/projects", { name: "Elsewhere" }, other.key), 201);
    const theirs = await dashboard(other.key);
    expect(theirs.projects.map((p) => p.name)).toEqual(["Elsewhere"]);
    expect(theirs.recent_runs).toEqual([]);
    expect((await dashboard()).projects.map((p) => p.name)).not.toContain("Elsewhere");
    const member = await s.userWithKey("member@acme.test", "acme", "member");
    expect((await dashboard(member.key)).projects.map((p) => p.slug).sort()).toEqual([blog, shop].sort());
    const printed = await cli.run(["dashboard", "--json"]);
    expect(printed.code).toBe(0);
    expect(tile(JSON.parse(printed.stdout) as Dashboard, shop)).toMatchObject({ automations: 4, failing: 1 });
  });

  test("the first 50 projects, in list_projects' order, and whether there are more", async () => {
    const other = await s.userWithKey("owner@many.test", "many", "owner");
    for (let i = 0; i < 51; i++) await json(await s.call("POST", "/projects", { name: `P${i}` }, other.key), 201);
    const d = await dashboard(other.key);
    expect(d.more_projects).toBe(true);
    const listed = await json<{ data: { slug: string }[] }>(await s.call("GET", "/projects?limit=50", undefined, other.key));
    expect(d.projects.map((p) => p.slug)).toEqual(listed.data.map((p) => p.slug));
  });
});
