// svc serve on SQLite checkpoints its write-ahead log on a thread of its own: the serving connection keeps only a
// far-off safety net, the thread copies what is written back into the file while the server goes on, and at stop
// the thread's connection closes first so that the server's, the last, removes the log.
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { SAFETY_NET_PAGES } from "../src/db/sqlite-checkpoints";
import { startTestServer } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

test("the log is checkpointed by the thread while the server writes, and removed when it stops", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false } });
  try {
    const core = s.server.core;
    const sqlite = core.sqlite;
    if (!sqlite || !core.checkpoints) throw new Error("svc serve on SQLite has no checkpoint thread");
    expect(sqlite.query<{ wal_autocheckpoint: number }, []>("PRAGMA wal_autocheckpoint").get()?.wal_autocheckpoint).toBe(SAFETY_NET_PAGES);
    // ~6 MB through the serving connection: past SQLite's own 1000-page threshold, short of the safety net.
    sqlite.exec("CREATE TABLE scratch (x TEXT)");
    const insert = sqlite.query("INSERT INTO scratch (x) VALUES (?)");
    for (let i = 0; i < 1500; i++) insert.run(`${i}`.padEnd(4000, "x"));
    expect(await waitUntil(() => (core.checkpoints?.frames ?? 0) >= 1000, 5_000)).toBe(true);
    // The API answers throughout.
    expect((await s.call("GET", "/projects")).status).toBe(200);
    // The server alone (the helper's stop would remove the directory too).
    await s.server.stop();
    expect(existsSync(join(s.dataDir, "svc.sqlite"))).toBe(true);
    expect(existsSync(join(s.dataDir, "svc.sqlite-wal"))).toBe(false);
  } finally {
    await s.stop();
  }
});
