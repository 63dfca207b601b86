// Retention over the real server and its SQLite file: an automation's runs beyond the limit go within seconds of a
// run passing it, with their artifacts and whole group runs (never part of one); runs past the age limit go on the
// sweep at start, and within 10 s of growing past it while the server runs; the daily roll-ups keep history whole.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { runSql, startTestServer, tempDir, testDatabaseUrl } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

setDefaultTimeout(60_000);

let target: TargetApp;
beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
});

type Page<T> = { data: T[]; next_cursor: string | null };

/** Polls the API (not a timer): true once `check` holds, false after 10 s (the bound after a run ends). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (await check()) return true;
    await Bun.sleep(100);
  }
  return check();
}

test("an automation's runs beyond max_runs_per_automation go within 10 s, with their artifacts; history keeps counting them", async () => {
  // Set through its environment variable.
  const s = await startTestServer({ rate_limit: { enabled: false } }, { SVC_RETENTION_MAX_RUNS_PER_AUTOMATION: "3" });
  try {
    const { project, envId } = await projectWithEnv(s, "Keep three", { BASE_URL: target.url });
    const id = await createAutomation(s, project, { name: "ping", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
    const runs: string[] = [];
    for (let i = 0; i < 4; i++) runs.push((await waitForRun(s, project, await startRun(s, project, id))).id);
    // An artifact of the oldest run, as the browser runner would have written it.
    const oldest = join(s.dataDir, "artifacts", runs[0] as string);
    mkdirSync(oldest, { recursive: true });
    writeFileSync(join(oldest, "shot.png"), "png");
    runs.push((await waitForRun(s, project, await startRun(s, project, id))).id);

    const listed = async () => (await json<Page<{ id: string }>>(await s.call("GET", `/projects/${project}/runs?automation=${id}`))).data.map((r) => r.id);
    expect(await eventually(async () => (await listed()).length === 3)).toBe(true);
    expect((await listed()).sort()).toEqual(runs.slice(2).sort());
    expect(existsSync(oldest)).toBe(false);
    expect((await s.call("GET", `/projects/${project}/runs/${runs[0]}`)).status).toBe(404);

    const h = await json<{ runs: number; passed: number }>(await s.call("GET", `/projects/${project}/automations/${id}/history?days=1`));
    expect(h).toMatchObject({ runs: 5, passed: 5 });
    const a = await json<{ health: { runs: number; runs_7d: number } }>(await s.call("GET", `/projects/${project}/automations/${id}`));
    expect(a.health).toMatchObject({ runs: 3, runs_7d: 5 });
  } finally {
    await s.stop();
  }
});

test("retention removes whole group runs: the other automation's run in it goes too, and the group runs left keep their stored verdict", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, retention: { max_runs_per_automation: 2 } });
  try {
    const { project, envId } = await projectWithEnv(s, "Whole groups", { BASE_URL: target.url });
    const often = await createAutomation(s, project, { name: "often", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
    const rare = await createAutomation(s, project, {
      name: "rare",
      kind: "http",
      environment: envId,
      steps: [{ request: { url: "/status?code=500" }, expect: [{ status: 200 }] }],
    });
    await json(await s.call("POST", `/projects/${project}/groups`, { name: "pair", automation_ids: [often, rare] }), 201);
    const started = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/pair/run`, {}), 202);
    const groupRun = async (id: string) => s.call("GET", `/projects/${project}/group-runs/${id}`);
    expect(await eventually(async () => (await (await groupRun(started.id)).json()).status === "failed")).toBe(true);
    const rareRun = (await json<{ runs: { id: string; automation_id: string }[] }>(await groupRun(started.id))).runs.find((r) => r.automation_id === rare);

    // A second group run, then a run of "often" alone: the first group run's "often" run is now beyond the limit.
    const second = await json<{ id: string }>(await s.call("POST", `/projects/${project}/groups/pair/run`, {}), 202);
    expect(await eventually(async () => (await (await groupRun(second.id)).json()).status === "failed")).toBe(true);
    await waitForRun(s, project, await startRun(s, project, often));

    expect(await eventually(async () => (await groupRun(started.id)).status === 404)).toBe(true);
    // "rare" had one run too few to be pruned itself: it went with its group run.
    expect((await s.call("GET", `/projects/${project}/runs/${rareRun?.id}`)).status).toBe(404);
    const left = await json<{ id: string; status: string; summary: { total: number; failed: number } }>(await groupRun(second.id));
    expect(left).toMatchObject({ status: "failed", summary: { total: 2, failed: 1 } });
    // Its verdict and summary were stored when its last run ended: what the API answers is that record.
    const [stored] = await s.sql<{ status: string; summary: string }>("SELECT status, summary FROM group_runs WHERE id = ?", second.id);
    expect(stored?.status).toBe("failed");
    expect(JSON.parse(stored?.summary ?? "null")).toEqual(left.summary);
  } finally {
    await s.stop();
  }
});

test("runs older than run_days go on the sweep at start, and history still counts them", async () => {
  const dataDir = tempDir();
  try {
    let s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
    const { project, envId } = await projectWithEnv(s, "Old runs", { BASE_URL: target.url });
    const id = await createAutomation(s, project, { name: "old", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
    const old = (await waitForRun(s, project, await startRun(s, project, id))).id;
    const recent = (await waitForRun(s, project, await startRun(s, project, id))).id;
    await s.stop();

    // The first run was made 100 days ago (the default limit is 90).
    const longAgo = new Date(Date.now() - 100 * 86_400_000).toISOString();
    await runSql(await testDatabaseUrl(dataDir), dataDir, "UPDATE runs SET created_at = ? WHERE id = ?", [longAgo, old]);

    s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
    try {
      const ids = async () => (await json<Page<{ id: string }>>(await s.call("GET", `/projects/${project}/runs`))).data.map((r) => r.id);
      expect(await eventually(async () => !(await ids()).includes(old))).toBe(true);
      expect(await ids()).toEqual([recent]);
      expect(await json<{ runs: number }>(await s.call("GET", `/projects/${project}/history`))).toMatchObject({ runs: 2 });
    } finally {
      await s.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a run that grows past run_days while the server runs goes within 10 s, without waiting for the hourly sweep", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, retention: { run_days: 1 } });
  try {
    const { project, envId } = await projectWithEnv(s, "Aging", { BASE_URL: target.url });
    const id = await createAutomation(s, project, { name: "aging", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
    const aging = (await waitForRun(s, project, await startRun(s, project, id))).id;
    const recent = (await waitForRun(s, project, await startRun(s, project, id))).id;
    // Made a day old less 3 s: still inside the limit when the passes after its end look, past it 3 s later with no
    // run ending and no sweep due.
    const passesLimitAt = Date.now() + 3_000;
    const dayOld = new Date(passesLimitAt - 86_400_000).toISOString();
    await s.sql("UPDATE runs SET created_at = ?, finished_at = ? WHERE id = ?", dayOld, dayOld, aging);
    const ids = async () => (await json<Page<{ id: string }>>(await s.call("GET", `/projects/${project}/runs`))).data.map((r) => r.id);
    expect(await ids()).toContain(aging);
    const until = passesLimitAt + 10_000;
    while (Date.now() < until && (await ids()).includes(aging)) await Bun.sleep(100);
    expect(await ids()).toEqual([recent]);
  } finally {
    await s.stop();
  }
});

test("schedules' fire history older than run_days goes on the sweep at start; each schedule keeps its latest fire (its last_fire)", async () => {
  const dataDir = tempDir();
  try {
    let s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
    const { project, envId } = await projectWithEnv(s, "Old fires", { BASE_URL: target.url });
    const id = await createAutomation(s, project, { name: "pinged", kind: "http", environment: envId, steps: [{ request: { url: "/health" } }] });
    const sch = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/schedules`, { name: "hourly", target: { automation: id }, interval_seconds: 3600, enabled: false }),
      201,
    );
    const quiet = await json<{ id: string }>(
      await s.call("POST", `/projects/${project}/schedules`, { name: "quiet", target: { automation: id }, interval_seconds: 3600, enabled: false }),
      201,
    );
    await s.stop();
    // Fires of 120, 100 and 10 days ago for one schedule; only one of 100 days ago for the other.
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    const url = await testDatabaseUrl(dataDir);
    const insert = "INSERT INTO schedule_fires (schedule_id, due_at, fired_at, run_id, group_run_id, error, skipped) VALUES (?, ?, ?, NULL, NULL, NULL, NULL)";
    for (const days of [120, 100, 10]) await runSql(url, dataDir, insert, [sch.id, ago(days), ago(days)]);
    await runSql(url, dataDir, insert, [quiet.id, ago(100), ago(100)]);

    s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
    try {
      const fires = async () => (await s.sql<{ schedule_id: string; due_at: string }>("SELECT schedule_id, due_at FROM schedule_fires ORDER BY due_at")).length;
      expect(await eventually(async () => (await fires()) === 2)).toBe(true);
      const left = await s.sql<{ schedule_id: string }>("SELECT schedule_id FROM schedule_fires ORDER BY schedule_id");
      expect(left.map((f) => f.schedule_id).sort()).toEqual([sch.id, quiet.id].sort());
      // The quiet schedule's only fire is its last_fire: kept, however old.
      expect(
        (await json<{ last_fire: { due_at: string } | null }>(await s.call("GET", `/projects/${project}/schedules/${quiet.id}`))).last_fire,
      ).not.toBeNull();
    } finally {
      await s.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
