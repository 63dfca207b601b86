// `svc admin backup` taken while the server is under write load, restored into a new data directory with
// every row and artifact intact; and the refusals of both commands.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");

function svc(...args: string[]) {
  const p = Bun.spawnSync(["bun", MAIN, ...args], { env: { ...process.env, SVC_LOG_LEVEL: "warn" } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

function svcAsync(...args: string[]) {
  const p = Bun.spawn(["bun", MAIN, ...args], { stdout: "pipe", stderr: "pipe", env: { ...process.env, SVC_LOG_LEVEL: "warn" } });
  return (async () => ({ code: await p.exited, out: await new Response(p.stdout).text(), err: await new Response(p.stderr).text() }))();
}

/** Every user table's rows, in a stable order, as JSON text. */
function dumpTables(file: string): Record<string, string> {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all();
    return Object.fromEntries(tables.map(({ name }) => [name, JSON.stringify(db.query(`SELECT * FROM "${name}" ORDER BY rowid`).all())]));
  } finally {
    db.close();
  }
}

let s: TestServer;
let work: string;
beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  work = tempDir("svc-backup-");
});
afterAll(async () => {
  await s.stop();
  rmSync(work, { recursive: true, force: true });
});

test("a backup taken during write load restores into a new data dir with every row and artifact intact", async () => {
  // Some runs with artifact files, as the run engine leaves them.
  expect((await s.call("POST", "/projects", { name: "Base" })).status).toBe(201);
  const aut = await (
    await s.call("POST", "/projects/base/automations", {
      name: "probe",
      kind: "http",
      steps: [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }],
    })
  ).json();
  const runIds: string[] = [];
  for (let i = 0; i < 3; i++) runIds.push((await (await s.call("POST", `/projects/base/automations/${aut.id}/run`)).json()).id);
  for (const id of runIds) {
    mkdirSync(join(s.dataDir, "artifacts", id), { recursive: true });
    writeFileSync(
      join(s.dataDir, "artifacts", id, "evidence.bin"),
      new Uint8Array(50_000).map((_, i) => (i + id.length) % 256),
    );
  }

  // Writers keep inserting while the backup runs.
  const acknowledged: string[] = [];
  let loading = true;
  const writers = Array.from({ length: 4 }, async (_, w) => {
    for (let i = 0; loading; i++) {
      const r = await s.call("POST", "/projects", { name: `Load ${w}-${i}` });
      expect(r.status).toBe(201);
      acknowledged.push((await r.json()).id);
    }
  });
  await Bun.sleep(300);
  const beforeBackup = [...acknowledged];
  const out = join(work, "svc-backup.sqlite");
  const backup = await svcAsync("admin", "backup", "--out", out, "--data-dir", s.dataDir);
  loading = false;
  await Promise.all(writers);
  expect(backup.err).toBe("");
  expect(backup.code).toBe(0);
  expect(backup.out).toContain(`to ${out}`);
  expect(backup.out).toContain("artifacts of 3 runs");
  // It holds password, key and session hashes: its owner's alone.
  expect(statSync(out).mode & 0o777).toBe(0o600);
  expect(beforeBackup.length).toBeGreaterThan(10);
  expect(acknowledged.length).toBeGreaterThan(beforeBackup.length);

  // The copy is a plain, intact SQLite file holding everything acknowledged before it began.
  const copy = new Database(out, { readonly: true });
  expect(copy.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
  const inCopy = new Set(
    copy
      .query<{ id: string }, []>("SELECT id FROM projects")
      .all()
      .map((r) => r.id),
  );
  copy.close();
  for (const id of beforeBackup) expect(inCopy.has(id)).toBe(true);

  // Restore into a new data directory: same rows, same artifacts.
  const restored = join(work, "restored");
  const r = svc("admin", "restore", "--from", out, "--data-dir", restored);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  expect(r.out).toContain("with its artifacts");
  expect(dumpTables(join(restored, "svc.sqlite"))).toEqual(dumpTables(out));
  for (const id of runIds) {
    expect(readFileSync(join(restored, "artifacts", id, "evidence.bin"))).toEqual(readFileSync(join(s.dataDir, "artifacts", id, "evidence.bin")));
  }

  // A server on the restored directory answers the same key with the same projects.
  const server = await startServer(loadConfig({ env: {}, flags: { port: 0, data_dir: restored, log_level: "warn" } }));
  try {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: { id: string }[]; next_cursor: string | null } = await (
        await fetch(`${server.url}/api/v1/ops/projects?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: { authorization: `Bearer ${s.key}` } })
      ).json();
      ids.push(...page.data.map((p) => p.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(new Set(ids)).toEqual(inCopy);
  } finally {
    await server.stop();
  }
});

test("a run's screenshot is inside the backup's database file: restored alone, it is served", async () => {
  const target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response("<!doctype html><title>Home</title><h1>Welcome</h1>", { headers: { "content-type": "text/html" } }),
  });
  try {
    expect((await s.call("POST", "/projects", { name: "Shots" })).status).toBe(201);
    expect((await s.call("POST", "/projects/shots/environments", { name: "local", variables: { BASE_URL: `http://127.0.0.1:${target.port}` } })).status).toBe(
      201,
    );
    const aut = await (
      await s.call("POST", "/projects/shots/automations", {
        name: "home",
        kind: "browser",
        environment: "local",
        // Generous: the first browser run of a loaded machine starts Chromium; this test is about the backup.
        steps: [{ goto: "/", timeout_ms: 30_000 }, { screenshot: "home" }],
      })
    ).json();
    const runId = (await (await s.call("POST", `/projects/shots/automations/${aut.id}/run`)).json()).id as string;
    let run: { status: string; artifacts: string[] } = { status: "queued", artifacts: [] };
    for (const until = Date.now() + 90_000; Date.now() < until && ["queued", "running"].includes(run.status); await Bun.sleep(100)) {
      run = await (await s.call("GET", `/projects/shots/runs/${runId}`)).json();
    }
    expect(run.status).toBe("passed");
    const path = `/projects/shots/runs/${runId}/artifacts/${run.artifacts[0]}`;
    const shot = new Uint8Array(await (await s.call("GET", path)).arrayBuffer());
    expect(shot.byteLength).toBeGreaterThan(100);

    const out = join(work, "shots.sqlite");
    const backup = svc("admin", "backup", "--out", out, "--data-dir", s.dataDir);
    expect(backup.err).toBe("");
    expect(backup.code).toBe(0);
    // Nothing beside the file: the screenshot travels inside it.
    expect(existsSync(join(`${out}.artifacts`, runId))).toBe(false);
    const restored = join(work, "shots-restored");
    expect(svc("admin", "restore", "--from", out, "--data-dir", restored).code).toBe(0);
    const server = await startServer(loadConfig({ env: {}, flags: { port: 0, data_dir: restored, log_level: "warn" } }));
    try {
      const res = await fetch(`${server.url}/api/v1/ops${path}`, { headers: { authorization: `Bearer ${s.key}` } });
      expect(res.status).toBe(200);
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(shot);
    } finally {
      await server.stop();
    }
  } finally {
    await target.stop(true);
  }
}, 120_000);

test("backup refuses to overwrite an existing file and names a missing database", () => {
  const existing = join(work, "exists.sqlite");
  writeFileSync(existing, "keep me");
  const r = svc("admin", "backup", "--out", existing, "--data-dir", s.dataDir);
  expect(r.code).toBe(2);
  expect(r.err).toContain("already exists");
  expect(readFileSync(existing, "utf8")).toBe("keep me");
  const none = svc("admin", "backup", "--out", join(work, "x.sqlite"), "--data-dir", join(work, "no-such-dir"));
  expect(none.code).toBe(2);
  expect(none.err).toContain("no database at");
  expect(existsSync(join(work, "x.sqlite"))).toBe(false);
});

test("restore refuses a file that is not a backup and leaves the data dir untouched", () => {
  const junk = join(work, "junk.sqlite");
  writeFileSync(junk, "this is not a database at all, just text that is long enough to be read".repeat(20));
  const target = join(work, "untouched");
  const r = svc("admin", "restore", "--from", junk, "--data-dir", target);
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/cannot be opened|not an svc backup|damaged/);
  expect(existsSync(join(target, "svc.sqlite"))).toBe(false);
  const missing = svc("admin", "restore", "--from", join(work, "nope.sqlite"), "--data-dir", target);
  expect(missing.code).toBe(2);
  expect(missing.err).toContain("does not exist");
});

test("restore over an existing database needs --force and then keeps the old data aside", () => {
  const out = join(work, "second.sqlite");
  expect(svc("admin", "backup", "--out", out, "--data-dir", s.dataDir).code).toBe(0);
  const target = join(work, "occupied");
  expect(svc("admin", "restore", "--from", out, "--data-dir", target).code).toBe(0);
  const again = svc("admin", "restore", "--from", out, "--data-dir", target);
  expect(again.code).toBe(2);
  expect(again.err).toContain("--force");
  const forced = svc("admin", "restore", "--from", out, "--data-dir", target, "--force");
  expect(forced.code).toBe(0);
  expect(forced.out).toContain("moved the previous data to");
  const aside = readdirSync(target).filter((n) => n.startsWith("replaced-"));
  expect(aside.length).toBe(1);
  expect(existsSync(join(target, aside[0] as string, "svc.sqlite"))).toBe(true);
  expect(dumpTables(join(target, "svc.sqlite"))).toEqual(dumpTables(out));
});
