// GET /healthz (the process answers) and GET /readyz (database writable, disk not full, migrations applied,
// engines alive),
// both without authentication so that load balancers, systemd checks and Docker HEALTHCHECK can use them.
import { statfsSync } from "node:fs";
import type { Elysia } from "elysia";
import type { FastPaths } from "../../db/fast-paths";
import { migrations } from "../../db/migrations";
import type { ServerRuntime } from "../../extensions";

interface Check {
  ok: boolean;
  message?: string;
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });

/** A write that leaves nothing behind: proves the file is writable and not locked beyond the busy timeout. */
function checkWritable(fast: FastPaths): Check {
  try {
    fast.assertWritable();
    return { ok: true };
  } catch (e) {
    return { ok: false, message: `the database is not writable: ${(e as Error).message}` };
  }
}

/** Below this much free space the next write may fail: a load balancer should send traffic elsewhere. */
export const MIN_FREE_BYTES = 512 * 1024;

/** Free space on the filesystem holding the data directory (a full disk still lets BEGIN/ROLLBACK pass). */
function checkDisk(dataDir: string): Check {
  try {
    const fs = statfsSync(dataDir);
    const free = fs.bavail * fs.bsize;
    if (free >= MIN_FREE_BYTES) return { ok: true };
    return { ok: false, message: `the disk holding the data directory is full (${Math.floor(free / 1024)} KiB free): free space on it` };
  } catch (e) {
    return { ok: false, message: `cannot read the free space of the data directory: ${(e as Error).message}` };
  }
}

function checkMigrations(fast: FastPaths): Check {
  try {
    const applied = new Set(fast.appliedMigrations());
    const missing = Object.keys(migrations).filter((m) => !applied.has(m));
    return missing.length === 0 ? { ok: true } : { ok: false, message: `migrations not applied: ${missing.join(", ")}` };
  } catch (e) {
    return { ok: false, message: `cannot read the migration table: ${(e as Error).message}` };
  }
}

function checkEngines(runtime: ServerRuntime): Record<string, Check> {
  const out: Record<string, Check> = {};
  for (const engine of runtime.engines()) {
    // An engine without a health signal counts as alive once started: there is nothing else to ask it.
    const ok = engine.healthy ? engine.healthy() : true;
    out[engine.name] = ok ? { ok } : { ok, message: `the ${engine.name} engine is not taking work` };
  }
  return out;
}

export function healthRoutes(fast: FastPaths, dataDir: string, runtime: ServerRuntime) {
  return (app: Elysia) =>
    app
      .get("/healthz", () => json(200, { status: "ok" }))
      .get("/readyz", () => {
        const engines = checkEngines(runtime);
        const checks = { database: checkWritable(fast), disk: checkDisk(dataDir), migrations: checkMigrations(fast), engines };
        const failing = [["database", checks.database], ["disk", checks.disk], ["migrations", checks.migrations], ...Object.entries(engines)]
          .filter(([, c]) => !(c as Check).ok)
          .map(([name, c]) => `${name}: ${(c as Check).message ?? "failing"}`);
        if (failing.length === 0) return json(200, { status: "ready", checks });
        return json(503, { error: "unavailable", message: `not ready: ${failing.join("; ")}`, status: "unavailable", checks });
      }) as unknown as Elysia;
}
