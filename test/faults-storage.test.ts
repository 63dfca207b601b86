// Storage faults: a locked database answers 503 after the busy timeout and writes nothing half-way; an
// unusable data directory stops the server with a clear message; kill -9 during a burst of writes loses no
// acknowledged write.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runBinary, startServe } from "./helpers/binary";
import { startTestServer, tempDir } from "./helpers/server";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("storage faults", () => {
  test("a database locked by another process: 503 unavailable after the busy timeout, then normal service", async () => {
    const s = await startTestServer({ rate_limit: { enabled: false }, busy_timeout_ms: 300 });
    try {
      await s.call("POST", "/projects", { name: "Shop", slug: "shop" });
      const other = new Database(join(s.dataDir, "svc.sqlite"));
      other.exec("PRAGMA busy_timeout = 0");
      other.exec("BEGIN EXCLUSIVE");
      const started = performance.now();
      const res = await s.call("POST", "/projects", { name: "Blocked", slug: "blocked" });
      const waited = performance.now() - started;
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body.error).toBe("unavailable");
      expect(res.headers.get("retry-after")).toBe("1");
      expect(waited).toBeGreaterThanOrEqual(250);
      other.exec("ROLLBACK");
      other.close();
      const list = await (await s.call("GET", "/projects")).json();
      expect(list.data.map((p: { slug: string }) => p.slug)).toEqual(["shop"]);
      expect((await s.call("POST", "/projects", { name: "Later", slug: "later" })).status).toBe(201);
    } finally {
      await s.stop();
    }
  });

  test("a data directory that cannot be created stops the server with a clear message and a non-zero exit", async () => {
    const dir = tempDir("svc-fault-");
    dirs.push(dir);
    const blocker = join(dir, "not-a-dir");
    writeFileSync(blocker, "x");
    const r = await runBinary(["serve", "--port", "0", "--data-dir", join(blocker, "data")], { cwd: dir });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("data directory");
    expect(r.stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
  });

  test("kill -9 during a burst of writes: every acknowledged write is there after restart", async () => {
    const dir = tempDir("svc-kill-");
    dirs.push(dir);
    await runBinary(["admin", "create-user", "--email", "k@acme.test", "--name", "K", "--workspace", "acme"], { cwd: dir });
    const key = (await runBinary(["admin", "create-key", "--email", "k@acme.test", "--workspace", "acme"], { cwd: dir })).stdout.trim();
    const env = { SVC_RATE_LIMIT_ENABLED: "false", SVC_LOG_LEVEL: "error" };
    const first = await startServe([], { cwd: dir, env });
    const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    await fetch(`${first.url}/api/v1/ops/projects`, { method: "POST", headers, body: '{"name":"Burst","slug":"burst"}' });
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop && i < 10_000; i++) {
        try {
          const res = await fetch(`${first.url}/api/v1/ops/projects/burst/features`, { method: "POST", headers, body: JSON.stringify({ name: `w${w}-${i}` }) });
          if (res.status === 201) acknowledged.push((await res.json()).id);
        } catch {
          return; // the server is gone
        }
      }
    });
    await Bun.sleep(700);
    first.proc.kill("SIGKILL");
    stop = true;
    await first.proc.exited;
    await Promise.all(writers);
    expect(acknowledged.length).toBeGreaterThan(20);

    const second = await startServe([], { cwd: dir, env });
    try {
      const ids = new Set<string>();
      let cursor: string | null = null;
      do {
        const url: string = `${second.url}/api/v1/ops/projects/burst/features?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
        const page = await (await fetch(url, { headers })).json();
        for (const f of page.data) ids.add(f.id);
        cursor = page.next_cursor;
      } while (cursor);
      const lost = acknowledged.filter((id) => !ids.has(id));
      expect(lost).toEqual([]);
    } finally {
      await second.stop("SIGTERM");
    }
  });
});
