// What the core needs from a storage dialect beyond the query builder: the hot run-queue statements, the
// change feed read caches key on, readiness probes, error classification and backups. The core owns these
// interfaces; src/db/sqlite.ts implements them for SQLite, and another backend is one more implementation.
import { type Kysely, PostgresAdapter } from "kysely";
import type { DB, GenerationTable, RunTable } from "../db/schema";

/** Which SQL dialect a store's queries go to: the few statements that differ ask this and branch. */
export function sqlDialect<T>(db: Kysely<T>): "sqlite" | "postgres" {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

/** A storage failure in the core's words, whatever the backend called it. */
export type StorageErrorKind = "busy" | "disk_full" | "constraint";

/** Tells whether the database may have changed since a given moment (for in-memory read caches). */
export interface ChangeFeed {
  /** Changes whenever the database may have changed, in this process or (as of the last refresh) another. */
  version(): string;
  /** What other connections have committed, as of the last refresh. */
  externalVersion(): number;
  /** Reads what other connections have committed; called at the start of each request rather than per check. */
  refreshExternal(): number;
  /** Refreshes unless the last refresh is younger than `maxAgeMs`. */
  refreshExternalIfOlderThan(maxAgeMs: number): void;
}

export interface ClaimedRunRow {
  id: string;
  claim: number;
  project_id: string;
  automation_id: string;
  automation_name: string;
  started_at: string;
  spec: string;
  environment_id: string | null;
  /** Its per-run variables (a JSON object) and the names of its one-run secrets (a JSON array), as stored. */
  variables: string;
  one_run_secrets: string;
  /** The attempts made before this claim (a runner lost while executing it), as stored: "[]" for a fresh run. */
  attempts: string;
}

export interface StoredEnvironment {
  id: string;
  name: string;
  variables: string;
  secrets: string;
  secrets_sealed: number;
  protected: number;
  allowed_hosts: string | null;
}

export interface FinishedRunRow {
  id: string;
  claim: number;
  automationId: string;
  status: RunTable["status"];
  /** When it started executing: the claim's time, or later for a run claimed ahead of a free slot. */
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  error: string | null;
  summaryJson: string;
  resultsJson: string;
  attemptsJson: string;
}

/**
 * A run as its finishing statement left it: what the alert state and the daily roll-ups need of it, returned by
 * the statement itself (no second read of the runs). The run is marked counted (`rolled_up`) by the same statement.
 */
export interface FinishedRun {
  id: string;
  project_id: string;
  automation_id: string;
  automation_name: string;
  group_run_id: string | null;
  environment_id: string | null;
  schedule_id: string | null;
  status: RunTable["status"];
  attempts: string;
  trigger: RunTable["trigger"];
  duration_ms: number | null;
  finished_at: string | null;
  created_at: string;
  /** The runner (svc runner) that executed it; null for a server's own engine. */
  runner_id: string | null;
}

/** The columns FinishedRun holds: what the finishing statements return, and what alerting reads of runs ended elsewhere. */
export const FINISHED_RUN_COLUMN_NAMES = [
  "id",
  "project_id",
  "automation_id",
  "automation_name",
  "group_run_id",
  "environment_id",
  "schedule_id",
  "status",
  "attempts",
  "trigger",
  "duration_ms",
  "finished_at",
  "created_at",
  "runner_id",
] as const satisfies readonly (keyof FinishedRun)[];
/** The same, for a RETURNING clause. */
export const FINISHED_RUN_COLUMNS = FINISHED_RUN_COLUMN_NAMES.join(", ");

export interface ClaimedGenerationRow {
  id: string;
  project_id: string;
  feature_id: string;
  strategy: GenerationTable["strategy"];
}

/**
 * The statements too hot for the query builder. Each one is complete on its own: it never interleaves with
 * another request's transaction, and a write is reported to the change feed, so callers add nothing.
 */
export interface RunQueueStore {
  /**
   * Marks up to `limit` queued runs `running` (no two workers get the same run), with their environments as stored.
   * Taken in turns: round-robin across workspaces, then across a workspace's projects, then oldest first; none of a
   * workspace that already has `workspaceCap` runs running (0: no cap).
   */
  claimQueuedRuns(now: string, limit: number, workspaceCap: number): Promise<{ runs: ClaimedRunRow[]; environments: Map<string, StoredEnvironment> }>;
  /**
   * Writes finished runs in one transaction; a run no longer `running` under its claim is not overwritten.
   * `alongside` runs in that same transaction with the runs this call finished (not cancelled ones), which are
   * marked counted in the roll-ups: `alongside` must count them.
   */
  finishRuns(now: string, rows: FinishedRunRow[], alongside: (trx: Kysely<DB>, finished: FinishedRun[]) => Promise<void>): Promise<void>;
  /** Marks the oldest queued generation `running` (no two workers take the same job). */
  claimNextGeneration(now: string, progressJson: string): Promise<ClaimedGenerationRow | null>;
  /** Runs per status. */
  runCountsByStatus(): Promise<{ status: string; n: number }[]>;
  /**
   * Marks up to `limit` queued runs a remote runner may take `running` under its lease, in the same turns as
   * claimQueuedRuns (no workspace cap): of its
   * workspace only (when it has one), whose environment's runner_labels it all has, browser runs only if it can.
   */
  claimRunsForRunner(now: string, runner: RunnerClaimFilter, limit: number): Promise<{ runs: ClaimedRunRow[]; environments: Map<string, StoredEnvironment> }>;
}

export interface RunnerClaimFilter {
  runnerId: string;
  leaseExpiresAt: string;
  workspaceId: string | null;
  labels: string[];
  browser: boolean;
}

/** What readiness asks of the store. */
export interface StorageProbe {
  /** Which database engine holds the data. */
  readonly backend: "sqlite" | "postgres";
  /** Throws unless a write transaction can be opened now (within the busy timeout); leaves nothing behind. */
  assertWritable(): Promise<void>;
  /** The migrations this binary knows that the database has not applied. */
  missingMigrations(): Promise<string[]>;
}

/** One take from a shared token bucket: whether a token was granted, and the tokens left after it (fractional). */
export interface SharedBucketTake {
  allowed: boolean;
  tokens: number;
}

/**
 * Token buckets kept in the database, so that every node sharing it takes from the same budget (PostgreSQL). Each
 * take is one atomic statement: refill since the last take, then take one token if there is one.
 */
export interface SharedBuckets {
  take(bucket: string, capacityPerHour: number): Promise<SharedBucketTake>;
}
