// What `svc healthcheck` reads to tell whether a runner on this machine (or in this container) is healthy: `svc runner`
// writes, at most every few seconds, when it last heard from its server. A runner has no port to ask, and a live
// process that has not reached its server for a minute cannot take runs.
import { svcProcessAlive } from "../process-alive";
import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** How often a runner that keeps hearing from its server rewrites the file. */
const WRITE_EVERY_MS = 5_000;
/** A runner that has not heard from its server for this long is unhealthy (its claims and heartbeats answer within ~25 s). */
export const RUNNER_SILENCE_MS = 60_000;

export interface RunnerHealth {
  pid: number;
  server: string;
  /** When the runner last had an answer from its server (ISO time). */
  contact_at: string;
}

/**
 * One per user: in the user's runtime directory, else their home (a directory of their own, never a shared /tmp
 * where another user could put a file in its place). In the image, /var/lib/svc.
 */
export function runnerHealthPath(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR?.trim();
  return join(runtime ? runtime : env.HOME?.trim() || homedir(), ".svc-runner-health.json");
}

/** The runner's side: `contacted()` on every answer from the server, `remove()` as it exits. */
export class RunnerHealthFile {
  private writtenAt = 0;
  private failed = false;

  constructor(
    private readonly server: string,
    private readonly path = runnerHealthPath(),
  ) {}

  contacted(now = Date.now()): void {
    if (this.failed || now - this.writtenAt < WRITE_EVERY_MS) return;
    this.writtenAt = now;
    const health: RunnerHealth = { pid: process.pid, server: this.server, contact_at: new Date(now).toISOString() };
    const temporary = `${this.path}.${process.pid}`;
    try {
      // Replaced whole: a check never reads half a file.
      writeFileSync(temporary, `${JSON.stringify(health)}\n`, { mode: 0o644 });
      renameSync(temporary, this.path);
    } catch {
      // A read-only home: the runner works the same, only `svc healthcheck --runner` cannot tell.
      this.failed = true;
      rmSync(temporary, { force: true });
    }
  }

  remove(): void {
    if (this.writtenAt === 0) return;
    try {
      if ((readRunnerHealth(this.path)?.pid ?? process.pid) === process.pid) rmSync(this.path, { force: true });
    } catch {}
  }
}

/** The file as a runner wrote it, or null (none, or not one). */
export function readRunnerHealth(path = runnerHealthPath()): RunnerHealth | null {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
  const h = value as Partial<RunnerHealth> | null;
  if (!h || !Number.isInteger(h.pid) || typeof h.server !== "string" || typeof h.contact_at !== "string" || Number.isNaN(Date.parse(h.contact_at))) return null;
  return h as RunnerHealth;
}

/** Whether the runner that wrote the note still runs (and is a runner, not a process that got its id since). */
export const runnerAlive = (pid: number): boolean => svcProcessAlive(pid, "runner");
