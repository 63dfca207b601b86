// Run artifacts live in the database (table run_artifacts), not on one node's disk: a browser run's screenshot is
// served from its row, retention removes the rows with their runs, and files an earlier version left under
// DATA_DIR/artifacts/<run>/ are moved into the database when the server starts.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { createAutomation, json, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, tempDir } from "./helpers/server";

// A browser run starts chromium: seconds on a busy machine.
setDefaultTimeout(120_000);

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
let target: ReturnType<typeof Bun.serve>;
beforeAll(() => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response("<!doctype html><title>Home</title><h1>Welcome</h1>", { headers: { "content-type": "text/html" } }),
  });
});
afterAll(async () => {
  await target.stop(true);
});

/** Polls the API: true once `check` holds, false after 15 s (retention's bound after a run ends is 10 s). */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (await check()) return true;
    await Bun.sleep(100);
  }
  return check();
}

test("a browser run's screenshot is kept in the database, not on disk, and retention removes its rows with the run", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, retention: { max_runs_per_automation: 1 } });
  try {
    const { project, envId } = await projectWithEnv(s, "Shots", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const id = await createAutomation(s, project, { name: "home", kind: "browser", environment: envId, steps: [{ goto: "/" }, { screenshot: "home" }] });
    const first = await waitForRun(s, project, await startRun(s, project, id), 90_000);
    expect(first.status).toBe("passed");
    const name = (first as unknown as { artifacts: string[] }).artifacts[0] ?? "";
    expect(name).toMatch(/home\.png$/);
    const res = await s.call("GET", `/projects/${project}/runs/${first.id}/artifacts/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 4)]).toEqual(PNG_MAGIC);
    const rows = await s.sql<{ name: string; size: number }>("SELECT name, size FROM run_artifacts WHERE run_id = ?", first.id);
    expect(rows).toEqual([{ name, size: bytes.byteLength }]);
    expect(existsSync(join(s.dataDir, "artifacts"))).toBe(false);

    // A second run puts the first beyond max_runs_per_automation: the run goes, and its artifact rows with it.
    const second = await waitForRun(s, project, await startRun(s, project, id), 90_000);
    expect(second.status).toBe("passed");
    expect(await eventually(async () => (await s.call("GET", `/projects/${project}/runs/${first.id}`)).status === 404)).toBe(true);
    expect(await s.sql("SELECT name FROM run_artifacts WHERE run_id = ?", first.id)).toEqual([]);
    expect((await s.sql<{ name: string }>("SELECT name FROM run_artifacts WHERE run_id = ?", second.id)).length).toBe(1);
  } finally {
    await s.stop();
  }
});

test("artifacts an earlier version left on the node's disk are moved into the database at start and served from it", async () => {
  const dataDir = tempDir("svc-artifacts-move-");
  const s = await startTestServer({ rate_limit: { enabled: false }, data_dir: dataDir });
  let restarted: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const { project, envId } = await projectWithEnv(s, "Old files", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const id = await createAutomation(s, project, { name: "ping", kind: "http", environment: envId, steps: [{ request: { url: "/" } }] });
    const run = await waitForRun(s, project, await startRun(s, project, id));
    await s.server.stop();
    // As an earlier version left them: one run's screenshot, and the directory of a run that is gone.
    const shot = new Uint8Array(4096).map((_, i) => (i * 7) % 256);
    mkdirSync(join(dataDir, "artifacts", run.id), { recursive: true });
    writeFileSync(join(dataDir, "artifacts", run.id, "01-old.png"), shot);
    mkdirSync(join(dataDir, "artifacts", "gone-run"), { recursive: true });
    writeFileSync(join(dataDir, "artifacts", "gone-run", "x.png"), "x");

    restarted = await startServer(
      loadConfig({ env: {}, flags: { port: 0, data_dir: dataDir, log_level: "warn", ...(s.databaseUrl ? { "database.url": s.databaseUrl } : {}) } }),
    );
    expect(existsSync(join(dataDir, "artifacts"))).toBe(false);
    const res = await fetch(`${restarted.url}/api/v1/ops/projects/${project}/runs/${run.id}/artifacts/01-old.png`, {
      headers: { authorization: `Bearer ${s.key}` },
    });
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(shot);
    expect((await getRunVia(restarted.url, s.key, project, run.id)).status).toBe(run.status);
  } finally {
    await restarted?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

async function getRunVia(url: string, key: string, project: string, runId: string): Promise<{ status: string }> {
  return json(await fetch(`${url}/api/v1/ops/projects/${project}/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } }));
}
