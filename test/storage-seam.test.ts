// The storage dialect's hot statements are complete on their own: they never run inside (and are never rolled
// back with) a transaction another request has open on the shared connection, and their writes reach the
// change feed read caches key on — with no help from their callers.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadConfig } from "../config/load";
import { openCore } from "../src/core";
import { claimNextGeneration } from "../src/core/generations/queue";
import { rawSqlite, startTestServer, tempDir } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A core on a fresh data directory (no engines: nothing claims but the test), with one queued generation. */
async function coreWithQueuedGeneration() {
  const dir = tempDir("svc-seam-");
  dirs.push(dir);
  const core = await openCore(loadConfig({ flags: { data_dir: dir, log_level: "warn" } }));
  const t = "2026-01-01T00:00:00.000Z";
  rawSqlite(core).run("INSERT INTO workspaces (id, name, slug, created_at, updated_at) VALUES ('wsp_1', 'W', 'w', ?, ?)", [t, t]);
  rawSqlite(core).run(
    "INSERT INTO projects (id, workspace_id, slug, name, description, created_at, updated_at) VALUES ('prj_1', 'wsp_1', 'p', 'P', '', ?, ?)",
    [t, t],
  );
  rawSqlite(core).run(
    "INSERT INTO features (id, project_id, name, description, acceptance_criteria, target, created_at, updated_at) VALUES ('fea_1', 'prj_1', 'F', '', '', NULL, ?, ?)",
    [t, t],
  );
  rawSqlite(core).run(
    `INSERT INTO generations (id, project_id, feature_id, status, strategy, progress, warnings, automation_ids, result, error, started_at, finished_at, created_at, updated_at)
     VALUES ('gen_1', 'prj_1', 'fea_1', 'queued', 'gherkin', '{}', '[]', '[]', NULL, NULL, NULL, NULL, ?, ?)`,
    [t, t],
  );
  return core;
}

const statusOf = (core: Awaited<ReturnType<typeof openCore>>) =>
  rawSqlite(core).query<{ status: string }, []>("SELECT status FROM generations WHERE id = 'gen_1'").get()?.status;

test("a generation claimed while another request's transaction is open stays claimed when that transaction rolls back", async () => {
  const core = await coreWithQueuedGeneration();
  try {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let entered = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const other = core.db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable("projects").set({ description: "half-done" }).where("id", "=", "prj_1").execute();
        entered();
        await held;
        throw new Error("the other request failed");
      })
      .catch((e: Error) => e.message);
    await inside;
    const claim = claimNextGeneration(core);
    release();
    expect(await other).toBe("the other request failed");
    expect((await claim)?.id).toBe("gen_1");
    expect(statusOf(core)).toBe("running");
    expect(rawSqlite(core).query<{ description: string }, []>("SELECT description FROM projects WHERE id = 'prj_1'").get()?.description).toBe("");
  } finally {
    await core.close();
  }
});

test("claiming a generation moves the change feed, so cached reads of it are dropped", async () => {
  const core = await coreWithQueuedGeneration();
  try {
    const before = core.changes.version();
    expect((await claimNextGeneration(core))?.id).toBe("gen_1");
    expect(statusOf(core)).toBe("running");
    expect(core.changes.version()).not.toBe(before);
  } finally {
    await core.close();
  }
});

test("GET /readyz answers 200 while another request holds a transaction open (it waits for it, not fails inside it)", async () => {
  const s = await startTestServer();
  try {
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let entered = () => {};
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const other = s.server.core.db.transaction().execute(async (trx) => {
      await trx.updateTable("workspaces").set({ name: "renamed" }).where("slug", "=", "acme").execute();
      entered();
      await held;
    });
    await inside;
    let answered = false;
    const ready = fetch(`${s.url}/readyz`).then((r) => {
      answered = true;
      return r;
    });
    // The transaction stays open until /readyz has answered, or for a second while it (correctly) waits.
    await waitUntil(() => answered, 1000);
    release();
    await other;
    const r = await ready;
    const body = await r.json();
    expect(body.checks?.database).toMatchObject({ ok: true });
    expect(r.status).toBe(200);
  } finally {
    await s.stop();
  }
});
