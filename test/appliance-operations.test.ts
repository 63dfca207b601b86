// Health, readiness, Prometheus metrics (with and without a token) and the download routes' errors, against
// the real server on a real database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configuredAddress } from "../src/core/address";
import { RunStatus } from "../src/manifest/records";
import { waitForRun } from "./helpers/runs";
import { onPostgres } from "./helpers/postgres";
import { rawSqlite, startTestServer, type TestServer } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

/** Reads one sample's value from a Prometheus text body; undefined when the series is absent. */
function sample(body: string, series: string): number | undefined {
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("without a metrics token", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ rate_limit: { per_workspace_per_hour: 3 } });
  });
  afterAll(() => s.stop());

  test("started on port 0 without base_url, the links the server hands out (alerts, password setup) name the port it got", () => {
    expect(s.server.port).toBeGreaterThan(0);
    expect(configuredAddress(s.server.core.config)).toBe(`http://127.0.0.1:${s.server.port}`);
  });

  test("GET /healthz answers 200 without a key", async () => {
    const r = await fetch(`${s.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: "ok" });
  });

  test("GET /readyz reports the database writable and every migration applied", async () => {
    const r = await fetch(`${s.url}/readyz`);
    const body = await r.json();
    expect(r.status).toBe(200);
    expect(body.status).toBe("ready");
    expect(body.checks.database).toEqual({ ok: true, backend: onPostgres ? "postgres" : "sqlite" });
    expect(body.checks.migrations).toEqual({ ok: true });
    expect(body.checks.disk).toEqual({ ok: true });
    // Every engine running inside this server is listed, and alive.
    const names = Object.keys(body.checks.engines);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(body.checks.engines[name]).toEqual({ ok: true });
  });

  test("GET /readyz answers 503 naming an engine that reports itself unhealthy", async () => {
    const { Elysia } = await import("elysia");
    const { healthRoutes } = await import("../src/http/operations/health");
    // The Engine interface is the boundary: an engine whose worker loop died reports healthy() === false.
    let alive = true;
    const engine = { name: "runs", start() {}, stop: async () => {}, healthy: () => alive };
    const app = healthRoutes(s.server.core, { engines: () => [engine] })(new Elysia() as never);
    expect((await app.handle(new Request("http://localhost/readyz"))).status).toBe(200);
    alive = false;
    const r = await app.handle(new Request("http://localhost/readyz"));
    const body = await r.json();
    expect(r.status).toBe(503);
    expect(body.error).toBe("unavailable");
    expect(body.message).toContain("runs: the runs engine is not taking work");
    expect(body.checks.engines.runs.ok).toBe(false);
  });

  test("GET /readyz answers 503 with the reason while the database is locked by another writer", async () => {
    const { Database } = await import("bun:sqlite");
    const other = new Database(join(s.dataDir, "svc.sqlite"));
    other.exec("PRAGMA busy_timeout = 0");
    other.exec("BEGIN IMMEDIATE");
    try {
      rawSqlite(s.server.core).exec("PRAGMA busy_timeout = 0");
      const r = await fetch(`${s.url}/readyz`);
      const body = await r.json();
      expect(r.status).toBe(503);
      expect(body.error).toBe("unavailable");
      expect(body.message).toContain("database");
      expect(body.checks.database.ok).toBe(false);
    } finally {
      other.exec("ROLLBACK");
      other.close();
      rawSqlite(s.server.core).exec("PRAGMA busy_timeout = 5000");
    }
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
  });

  test("GET /metrics counts requests by operation and status, latency, and rate-limit rejections", async () => {
    for (let i = 0; i < 5; i++) await s.call("GET", "/projects");
    const body = await (await fetch(`${s.url}/metrics`)).text();
    expect(body).toContain("# TYPE svc_http_requests_total counter");
    expect(sample(body, 'svc_http_requests_total{route="list_projects",method="GET",status="200"}')).toBe(3);
    expect(sample(body, 'svc_http_requests_total{route="list_projects",method="GET",status="429"}')).toBe(2);
    expect(sample(body, "svc_rate_limit_rejections_total")).toBe(2);
    expect(sample(body, 'svc_http_request_duration_seconds_count{route="list_projects"}')).toBe(5);
    expect(sample(body, 'svc_http_request_duration_seconds_bucket{route="list_projects",le="+Inf"}')).toBe(5);
    // Buckets are cumulative: never decreasing, and the last finite one holds every request here (all < 10 s).
    const buckets = [...body.matchAll(/svc_http_request_duration_seconds_bucket\{route="list_projects",le="([^"]+)"\} (\d+)/g)].map((m) => Number(m[2]));
    expect(buckets.length).toBe(14);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1] as number);
    expect(buckets[12]).toBe(5);
    expect(sample(body, 'svc_http_requests_total{route="/healthz",method="GET",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(sample(body, "svc_run_queue_depth")).toBe(0);
    expect(sample(body, "svc_runners_connected")).toBe(0);
    for (const st of ["queued", "running", "passed", "failed", "error", "timed_out", "cancelled"]) {
      expect(sample(body, `svc_runs{status="${st}"}`)).toBe(0);
    }
    expect(sample(body, "process_resident_memory_bytes")).toBeGreaterThan(1_000_000);
  });

  test("unknown paths and methods are folded into one label each", async () => {
    await fetch(`${s.url}/no/such/path/1`);
    await fetch(`${s.url}/no/such/path/2`);
    await fetch(`${s.url}/healthz`, { method: "PROPFIND" });
    const body = await (await fetch(`${s.url}/metrics`)).text();
    expect(body).not.toContain("/no/such/path");
    expect(body).not.toContain("PROPFIND");
    expect(body).toMatch(/svc_http_requests_total\{route="\/healthz",method="OTHER",status="\d+"\} 1/);
    expect(sample(body, 'svc_http_requests_total{route="other",method="GET",status="404"}')).toBeGreaterThanOrEqual(2);
  });

  test("GET /install.sh is a POSIX script pointing at this server", async () => {
    const r = await fetch(`${s.url}/install.sh`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("shellscript");
    const text = await r.text();
    expect(text.startsWith("#!/bin/sh\n")).toBe(true);
    expect(text).toContain(`SERVER='${s.url}'`);
    const syntax = Bun.spawnSync(["sh", "-n", "-c", text]);
    expect(syntax.exitCode).toBe(0);
  });

  test("GET /download/svc with an unknown platform is a 400 naming the bad parameter", async () => {
    const r = await fetch(`${s.url}/download/svc?os=windows&arch=x64`);
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.error).toBe("invalid_request");
    expect(body.details).toEqual([{ path: "os", message: "must be one of linux, darwin" }]);
    expect((await fetch(`${s.url}/download/svc.sha256?os=linux&arch=mips`)).status).toBe(400);
  });

  test("GET /download/svc without a build for the platform is a 404 that says how to provide one", async () => {
    // Under `bun run` the process is the Bun runtime, which is never served as svc.
    const r = await fetch(`${s.url}/download/svc?os=darwin&arch=arm64`);
    expect(r.status).toBe(404);
    const body = await r.json();
    expect(body.error).toBe("not_found");
    expect(body.message).toContain("svc-darwin-arm64");
    expect(body.message).toContain("--cross");
  });

  test("a cross-built executable dropped in <data_dir>/downloads is served with its SHA-256", async () => {
    const dir = join(s.dataDir, "downloads");
    mkdirSync(dir, { recursive: true });
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 251);
    writeFileSync(join(dir, "svc-linux-arm64"), bytes);
    chmodSync(join(dir, "svc-linux-arm64"), 0o755);
    const r = await fetch(`${s.url}/download/svc?os=linux&arch=arm64`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-disposition")).toContain("svc-linux-arm64");
    const got = new Uint8Array(await r.arrayBuffer());
    expect(got.length).toBe(bytes.length);
    const hex = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
    expect(await (await fetch(`${s.url}/download/svc.sha256?os=linux&arch=arm64`)).text()).toBe(`${hex}  svc-linux-arm64\n`);
  });
});

describe("with a metrics token", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ metrics: { token: "scrape-secret-123" } });
  });
  afterAll(() => s.stop());

  test("GET /metrics without the token is a 401 in the JSON error shape", async () => {
    const r = await fetch(`${s.url}/metrics`);
    expect(r.status).toBe(401);
    expect((await r.json()).error).toBe("unauthorized");
    expect((await fetch(`${s.url}/metrics`, { headers: { authorization: "Bearer wrong-secret-123" } })).status).toBe(401);
    expect((await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.key}` } })).status).toBe(401);
  });

  test("GET /metrics with the token answers the text format", async () => {
    const r = await fetch(`${s.url}/metrics`, { headers: { authorization: "Bearer scrape-secret-123" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    expect(await r.text()).toContain("svc_build_info");
  });

  test("health and readiness stay open without the token", async () => {
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
  });
});

describe("run gauges with real runs", () => {
  let s: TestServer;
  let target: ReturnType<typeof Bun.serve>;
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holdArrived = false;
  beforeAll(async () => {
    // A system under test: /ok answers at once, /hold only when the test lets it.
    target = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        if (new URL(req.url).pathname === "/hold") {
          holdArrived = true;
          await released;
        }
        return Response.json({ ok: true });
      },
    });
    // One worker, so that while one run is held the others wait in the queue.
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { concurrency: 1 } });
  });
  afterAll(async () => {
    release();
    await s.stop();
    await target.stop(true);
  });

  async function metrics(): Promise<string> {
    const r = await fetch(`${s.url}/metrics`);
    expect(r.status).toBe(200);
    return r.text();
  }

  async function automation(name: string, path: string, status: number): Promise<string> {
    const res = await s.call("POST", "/projects/gauges/automations", {
      name,
      kind: "http",
      steps: [{ request: { url: `${target.url.origin}${path}` }, expect: [{ status }] }],
    });
    expect(res.status).toBe(201);
    return (await res.json()).id;
  }

  async function run(automationId: string): Promise<string> {
    const res = await s.call("POST", `/projects/gauges/automations/${automationId}/run`, {});
    expect(res.status).toBe(202);
    return (await res.json()).id;
  }

  test("svc_runs by status and svc_run_queue_depth follow queued, running, passed and failed runs", async () => {
    expect((await s.call("POST", "/projects", { name: "Gauges", slug: "gauges" })).status).toBe(201);
    const held = await automation("held", "/hold", 200);
    const passing = await automation("passing", "/ok", 200);
    const failing = await automation("failing", "/ok", 201);

    const heldRun = await run(held);
    expect(await waitUntil(() => holdArrived, 3_000)).toBe(true);
    const waiting = [await run(passing), await run(passing), await run(failing)];

    // The queue depth and the runs per status, as /metrics reports them.
    const gauges = (text: string) =>
      Object.fromEntries([
        ["queue_depth", sample(text, "svc_run_queue_depth")],
        ...RunStatus.options.map((st) => [st, sample(text, `svc_runs{status="${st}"}`)]),
      ]);
    expect(gauges(await metrics())).toMatchObject({ queue_depth: 3, queued: 3, running: 1, passed: 0, failed: 0 });

    release();
    const finished = [await waitForRun(s, "gauges", heldRun, 10_000)];
    for (const id of waiting) finished.push(await waitForRun(s, "gauges", id, 10_000));
    expect(finished.map((r) => r.status)).toEqual(["passed", "passed", "passed", "failed"]);

    expect(gauges(await metrics())).toEqual({ queue_depth: 0, queued: 0, running: 0, passed: 3, failed: 1, error: 0, timed_out: 0, cancelled: 0 });
  }, 30_000);
});
