// Readiness: the database writable, the disk not full, every migration applied, the engines alive. The HTTP
// route (/readyz) only renders what this finds.
import { existsSync, statfsSync } from "node:fs";
import type { Core } from "./context";

export interface Check {
  ok: boolean;
  message?: string;
}

/** The database check also names the engine holding the data. */
export interface DatabaseCheck extends Check {
  backend: "sqlite" | "postgres";
}

export interface Readiness {
  ready: boolean;
  checks: { database: DatabaseCheck; disk: Check; migrations: Check; engines: Record<string, Check>; workers?: WorkersCheck };
  /** One line per failing check, "name: reason". */
  failing: string[];
}

/** The processes that execute runs apart from the API, and how they are kept from the data directory. */
export interface WorkersCheck extends Check {
  /**
   * Enforced by the OS: "uid", a separate unprivileged user (a root server); "namespace", the server's user in user and
   * mount namespaces (and a PID namespace where the machine allows) that hide the data directory and the server's
   * files (a server that is not root). Otherwise "construction": no database handle, settings or keys.
   */
  isolation: "uid" | "namespace" | "construction";
  /** With "namespace": whether workers also have their own PID namespace (the server's processes out of their sight). */
  pid_namespace?: boolean;
  /**
   * "batch": workers run under the kernel's SCHED_BATCH policy (Linux, `chrt`), so a worker woken by its work never
   * preempts the API's thread; "normal" where that cannot be done.
   */
  scheduling: "batch" | "normal";
  workers: number;
  ready: number;
  running: number;
  replaced: number;
  /** Whether a worker could open the database file when it started (null: not checked). */
  database_readable: boolean | null;
  /**
   * The Chromium browser runs start, as a worker found it (null: none found, or no worker ready yet). Without one,
   * only browser runs fail: the server stays ready, and `browser_problem` says how to install one.
   */
  browser: string | null;
  browser_problem?: string;
}

/** What readiness needs to know of an engine running in this process. */
export interface EngineHealth {
  name: string;
  healthy?(): boolean;
  /** An engine that executes runs in worker processes reports them. */
  workers?(): WorkersCheck | null;
}

/** Below this much free space the next write may fail: a load balancer should send traffic elsewhere. */
export const MIN_FREE_BYTES = 512 * 1024;

/** A write that leaves nothing behind: proves the file is writable and not locked beyond the busy timeout. */
async function checkWritable(core: Core): Promise<DatabaseCheck> {
  const backend = core.probe.backend;
  try {
    await core.probe.assertWritable();
    return { ok: true, backend };
  } catch (e) {
    return { ok: false, backend, message: `the ${backend === "postgres" ? "PostgreSQL " : ""}database is not writable: ${(e as Error).message}` };
  }
}

/**
 * Free space on the filesystem holding the data directory (a full disk still lets BEGIN/ROLLBACK pass). On
 * PostgreSQL the database is elsewhere: a data directory that does not exist holds nothing to run out of room for.
 */
function checkDisk(dataDir: string, backend: string): Check {
  if (backend === "postgres" && !existsSync(dataDir)) return { ok: true };
  try {
    const fs = statfsSync(dataDir);
    const free = fs.bavail * fs.bsize;
    if (free >= MIN_FREE_BYTES) return { ok: true };
    return { ok: false, message: `the disk holding the data directory is full (${Math.floor(free / 1024)} KiB free): free space on it` };
  } catch (e) {
    return { ok: false, message: `cannot read the free space of the data directory: ${(e as Error).message}` };
  }
}

async function checkMigrations(core: Core): Promise<Check> {
  try {
    const missing = await core.probe.missingMigrations();
    return missing.length === 0 ? { ok: true } : { ok: false, message: `migrations not applied: ${missing.join(", ")}` };
  } catch (e) {
    return { ok: false, message: `cannot read the migration table: ${(e as Error).message}` };
  }
}

function checkEngines(engines: readonly EngineHealth[]): Record<string, Check> {
  const out: Record<string, Check> = {};
  for (const engine of engines) {
    // An engine without a health signal counts as alive once started: there is nothing else to ask it.
    const ok = engine.healthy ? engine.healthy() : true;
    out[engine.name] = ok ? { ok } : { ok, message: `the ${engine.name} engine is not taking work` };
  }
  return out;
}

export async function readiness(core: Core, engines: readonly EngineHealth[]): Promise<Readiness> {
  const engineChecks = checkEngines(engines);
  const workers = engines.map((e) => e.workers?.() ?? null).find((w) => w !== null) ?? undefined;
  // At once, not one after the other: a database host that drops packets holds each for its whole limit.
  const [database, migrations] = await Promise.all([checkWritable(core), checkMigrations(core)]);
  const checks: Readiness["checks"] = {
    database,
    disk: checkDisk(core.config.data_dir, core.probe.backend),
    migrations,
    engines: engineChecks,
    ...(workers ? { workers } : {}),
  };
  const failing = (
    [
      ["database", checks.database],
      ["disk", checks.disk],
      ["migrations", checks.migrations],
      ...Object.entries(engineChecks),
      ...(workers ? [["workers", workers]] : []),
    ] as [string, Check][]
  )
    .filter(([, c]) => !c.ok)
    .map(([name, c]) => `${name}: ${c.message ?? "failing"}`);
  return { ready: failing.length === 0, checks, failing };
}
