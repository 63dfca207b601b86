// One-run secrets are never written to the database: they reach the run engine's claim from the memory of the
// running core, and a run queued with them that outlives its server (restart before it ran) ends as error, naming
// them, instead of running without them.
import { afterAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { openCore } from "../src/core";
import { createUserInWorkspace } from "../src/core/access/users";
import { callOperation } from "../src/core/call";
import type { Principal } from "../src/core/context";
import { claimQueuedRuns } from "../src/core/runs/queue";
import { tempDir } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SECRET = "one-run-secret-never-stored";

async function queuedWithSecret() {
  const dataDir = tempDir("svc-one-run-");
  dirs.push(dataDir);
  const config = loadConfig({ env: {}, flags: { data_dir: dataDir, log_level: "silent" } });
  const core = await openCore(config);
  const owner = await createUserInWorkspace(core.db, { email: "owner@acme.test", name: "owner", workspace: "acme", role: "owner" });
  const as: Principal = { userId: owner.userId, workspaceId: owner.workspaceId, role: "owner", via: "key", keyId: null, trigger: "api" };
  await callOperation(core, as, "createProject", { body: { name: "Shop", slug: "shop" } });
  await callOperation(core, as, "createEnvironment", { params: { project: "shop" }, body: { name: "test", variables: { BASE_URL: "http://127.0.0.1:9" } } });
  const steps = [{ request: { url: "/health", headers: { "x-key": "{{API_KEY}}" } } }];
  await callOperation(core, as, "createAutomation", { params: { project: "shop" }, body: { name: "uses key", kind: "http", steps } });
  const run = await callOperation(core, as, "runAutomation", {
    params: { project: "shop", automationId: "uses key" },
    body: { environment: "test", variables: { WHO: "ci" }, secrets: { API_KEY: SECRET } },
  });
  return { config, core, dataDir, run, as };
}

function filesContain(dir: string, text: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((f) => readFileSync(f).includes(Buffer.from(text)));
}

test("the claim gets the one-run secret (and the per-run variable) from memory; no file of the data directory holds it", async () => {
  const { core, dataDir, run } = await queuedWithSecret();
  try {
    expect(run.one_run_secrets).toEqual(["API_KEY"]);
    expect(JSON.stringify(run)).not.toContain(SECRET);
    expect(filesContain(dataDir, SECRET)).toEqual([]);
    const [claimed] = await claimQueuedRuns(core, 10);
    expect(claimed?.id).toBe(run.id);
    expect(claimed?.environment?.secrets.API_KEY).toBe(SECRET);
    expect(claimed?.environment?.variables).toMatchObject({ BASE_URL: "http://127.0.0.1:9", WHO: "ci" });
    expect(filesContain(dataDir, SECRET)).toEqual([]);
  } finally {
    await core.close();
  }
});

test("a run whose one-run secrets were lost to a restart ends as error, naming them, and is not handed to the engine", async () => {
  const { config, core, run, as } = await queuedWithSecret();
  await core.close();
  const again = await openCore(config);
  try {
    expect(await claimQueuedRuns(again, 10)).toEqual([]);
    const ended = await callOperation(again, as, "getRun", { params: { project: "shop", runId: run.id } });
    expect(ended.status).toBe("error");
    expect(ended.error).toContain("one-run secrets (API_KEY) are gone");
  } finally {
    await again.close();
  }
});
