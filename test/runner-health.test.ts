// The run engine's health signal read by GET /readyz: unhealthy while it cannot claim queued runs (the queue is
// locked by another process past the busy timeout), healthy again once it can, and unhealthy once stopped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { RunEngine } from "../src/runner/engine";
import { startTestServer, type TestServer } from "./helpers/server";
import { projectWithEnv, runToEnd } from "./helpers/runs";

interface Ready {
  status: number;
  runs: { ok: boolean; message?: string } | undefined;
  message: string | undefined;
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false }, busy_timeout_ms: 150 });
});
afterAll(async () => {
  await s.stop();
});

async function ready(): Promise<Ready> {
  const res = await fetch(`${s.url}/readyz`);
  const body = (await res.json()) as { message?: string; checks: { engines: Record<string, { ok: boolean; message?: string }> } };
  return { status: res.status, runs: body.checks.engines.runs, message: body.message };
}

async function until(pred: (r: Ready) => boolean, ms: number): Promise<Ready> {
  const deadline = Date.now() + ms;
  for (;;) {
    const r = await ready();
    if (pred(r) || Date.now() > deadline) return r;
    await Bun.sleep(100);
  }
}

describe("run engine health", () => {
  test("claims failing while another process holds the write lock: /readyz names the runs engine, then it recovers and runs again", async () => {
    const { project } = await projectWithEnv(s, "health", { BASE_URL: s.url });
    expect((await ready()).runs?.ok).toBe(true);

    const other = new Database(join(s.dataDir, "svc.sqlite"));
    other.exec("PRAGMA busy_timeout = 0");
    other.exec("BEGIN EXCLUSIVE");
    let down: Ready;
    try {
      // The engine polls the queue every second; three failed claims in a row mark it unhealthy.
      down = await until((r) => r.runs?.ok === false, 10_000);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(down.status).toBe(503);
    expect(down.runs).toEqual({ ok: false, message: "the runs engine is not taking work" });
    expect(down.message).toContain("runs: the runs engine is not taking work");

    const up = await until((r) => r.status === 200 && r.runs?.ok === true, 5_000);
    expect(up.status).toBe(200);
    expect(up.runs?.ok).toBe(true);
    // Taking work again: a run against the server's own /healthz passes.
    const run = await runToEnd(s, project, {
      name: "after the lock",
      kind: "http",
      environment: "test",
      steps: [{ request: { url: "/healthz" }, expect: [{ status: 200 }] }],
    });
    expect(run.status).toBe("passed");
  }, 30_000);

  test("a claim that never returns (the database connection held by stuck work): unhealthy, healthy again once released", async () => {
    expect((await until((r) => r.runs?.ok === true, 5_000)).runs?.ok).toBe(true);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Stuck work holding the one connection the queue's statements need: the engine's next claim waits on it.
    const held = s.server.core.db.connection().execute(() => gate);
    let down: Ready;
    try {
      down = await until((r) => r.runs?.ok === false, 10_000);
    } finally {
      release();
      await held;
    }
    expect(down.status).toBe(503);
    expect(down.runs?.message).toBe("the runs engine is not taking work");
    // The database itself stays writable: only the engine is reported.
    expect(down.message).not.toContain("database:");
    expect((await until((r) => r.status === 200, 5_000)).runs?.ok).toBe(true);
  }, 30_000);

  test("an engine reports healthy only between start and stop", async () => {
    const engine = new RunEngine(s.server.core);
    expect(engine.healthy()).toBe(false);
    await engine.start();
    expect(engine.healthy()).toBe(true);
    await engine.stop(0);
    expect(engine.healthy()).toBe(false);
  });
});
