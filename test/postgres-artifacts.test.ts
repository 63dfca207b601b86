import { join } from "node:path";
// Artifacts on PostgreSQL, whatever SVC_TEST_BACKEND says: a screenshot made by a run through one node is served by
// another node on the same database, which never saw the run's files (each node has a data directory of its own).
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { createAutomation, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { freshDatabaseUrl } from "./helpers/postgres";
import { startTestServer, tempDir } from "./helpers/server";

setDefaultTimeout(120_000);

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("a screenshot made through node A is served by node B", async () => {
  const target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response("<!doctype html><title>Home</title><h1>Welcome</h1>", { headers: { "content-type": "text/html" } }),
  });
  const url = await freshDatabaseUrl();
  const a = await startTestServer({ rate_limit: { enabled: false }, database: { url } });
  let b: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const { project, envId } = await projectWithEnv(a, "Shots", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const id = await createAutomation(a, project, { name: "home", kind: "browser", environment: envId, steps: [{ goto: "/" }, { screenshot: "home" }] });
    const run = await waitForRun(a, project, await startRun(a, project, id), 90_000);
    expect(run.status).toBe("passed");
    const name = (run as unknown as { artifacts: string[] }).artifacts[0] ?? "";
    const path = `/api/v1/ops/projects/${project}/runs/${run.id}/artifacts/${name}`;
    const fromA = new Uint8Array(await (await fetch(`${a.url}${path}`, { headers: { authorization: `Bearer ${a.key}` } })).arrayBuffer());
    expect([...fromA.slice(0, 4)]).toEqual(PNG_MAGIC);

    const dir = tempDir("svc-pg-node-b-");
    dirs.push(dir);
    // Node B shares node A's secrets key, as every node of one database must.
    b = await startServer(
      loadConfig({ env: {}, flags: { port: 0, data_dir: dir, log_level: "warn", "database.url": url, "secrets.key_file": join(a.dataDir, "secrets.key") } }),
    );
    const res = await fetch(`${b.url}${path}`, { headers: { authorization: `Bearer ${a.key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(fromA);
  } finally {
    await b?.stop();
    await a.stop();
    await target.stop(true);
  }
});
