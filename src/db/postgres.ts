// The PostgreSQL dialect: everything specific to PostgreSQL lives here — the connection pool (postgres.js), the
// Kysely driver over it, the hot run-queue statements with `FOR UPDATE SKIP LOCKED` claims, the change feed
// (LISTEN/NOTIFY), error classification and the migration lock. It implements the interfaces the core owns
// (src/core/storage.ts), as src/db/sqlite.ts does for SQLite.
import { randomBytes } from "node:crypto";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type KyselyPlugin,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type TransactionSettings,
  sql,
  type UnknownRow,
} from "kysely";
import postgres from "postgres";
import type {
  ChangeFeed,
  ClaimedGenerationRow,
  ClaimedRunRow,
  FinishedRunRow,
  RunnerClaimFilter,
  RunQueueStore,
  StorageErrorKind,
  StorageProbe,
  StoredEnvironment,
} from "../core/storage";
import { FINISHED_RUN_COLUMNS, type FinishedRun } from "../core/storage";
import { RunnerServed } from "./runner-served";
import type { DB } from "./schema";

export type Pool = postgres.Sql;

/** The channel every node listens on; the payload names the node that committed. */
const CHANGES_CHANNEL = "svc_changes";

/**
 * Opens the pool. Counts (`COUNT(*)`, int8) and sums (numeric) come back as numbers, as SQLite gives them; the
 * application name carries the node's id so the change feed can tell its own commits from other nodes'.
 */
export function openPool(url: string, opts: { nodeId: string; max?: number; connectTimeoutS?: number }): Pool {
  const asNumber = (v: string) => Number(v);
  return postgres(url, {
    max: opts.max ?? 10,
    connect_timeout: opts.connectTimeoutS ?? 10,
    backoff: reconnectDelayS,
    onnotice: () => undefined,
    connection: { application_name: opts.nodeId },
    types: {
      int8: { to: 20, from: [20], parse: asNumber, serialize: (v: unknown) => String(v) },
      numeric: { to: 1700, from: [1700], parse: asNumber, serialize: (v: unknown) => String(v) },
    },
  });
}

/** The longest a pooled connection waits before it tries the server again after failing to reach it. */
const MAX_RECONNECT_DELAY_S = 1;

/**
 * Seconds before a connection that failed tries again, after `retries` failures in a row across the pool. The
 * driver's own delay grows to 20 s: every engine's poll counts as a failure, so a few seconds of an unreachable
 * database made each request wait that long (answered by no one once the HTTP server closed the idle socket), and
 * a database back up was noticed 10–20 s late. Capped at a second, a request gets its 503 (or its answer) at once,
 * and a node's few connections retrying once a second are no load on a database coming back.
 */
function reconnectDelayS(retries: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, MAX_RECONNECT_DELAY_S);
}

export function newNodeId(): string {
  return `svc-${randomBytes(6).toString("hex")}`;
}

// ---- The Kysely driver ------------------------------------------------------------------------------------
// Kysely asks a driver for a connection per query. Reserving a pooled connection for each (what
// kysely-postgres-js does) costs a round of pool bookkeeping per statement; here a lone query goes straight to the
// pool and a connection is reserved only for a transaction, which is the only place session state is relied on.

/**
 * PostgreSQL's text cannot hold U+0000 (SQLite's can): a string parameter carrying it would fail the whole
 * statement. It is stored and looked up as U+FFFD instead — an id with it still matches nothing (404, as on
 * SQLite), and a name with it is kept with the replacement character.
 */
function withoutNul(v: unknown): unknown {
  return typeof v === "string" && v.includes("\u0000") ? v.replaceAll("\u0000", "\uFFFD") : v;
}

class PooledConnection implements DatabaseConnection {
  reserved: postgres.ReservedSql | null = null;

  constructor(private readonly pool: Pool) {}

  async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
    const target = this.reserved ?? this.pool;
    const params = q.parameters.map(withoutNul) as postgres.ParameterOrJSON<never>[];
    const result = await target.unsafe(q.sql, params, { prepare: true });
    const command = result.command;
    const affects = command === "INSERT" || command === "UPDATE" || command === "DELETE" || command === "MERGE";
    return { numAffectedRows: affects ? BigInt(result.count) : undefined, rows: Array.from(result) as R[] };
  }

  // biome-ignore lint/correctness/useYield: streaming is not offered on this dialect
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error("streaming queries are not supported on PostgreSQL by svc's driver");
  }
}

/** The advisory lock key every transaction takes first (see beginTransaction). */
const WRITER_LOCK = 7_301_915_043;

class PoolDriver implements Driver {
  constructor(private readonly pool: Pool) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PooledConnection(this.pool);
  }

  /**
   * Every transaction first takes one transaction-scoped advisory lock, so transactions run one at a time across all
   * nodes, as SQLite's single writer runs them: the rules that check and then write (unique names and slugs, the last
   * owner, one active generation per feature, first-run setup) hold by this lock, not by timing. Statements outside a
   * transaction, and the run-queue claims (SKIP LOCKED), do not wait for it.
   */
  async beginTransaction(c: PooledConnection, settings: TransactionSettings): Promise<void> {
    c.reserved = await this.pool.reserve();
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : "";
    await c.executeQuery(CompiledQuery.raw(`start transaction${level}`));
    await c.executeQuery(CompiledQuery.raw(`select pg_advisory_xact_lock(${WRITER_LOCK})`));
  }

  async commitTransaction(c: PooledConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(c: PooledConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw("rollback"));
  }

  async savepoint(c: PooledConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`savepoint "${name}"`));
  }

  async rollbackToSavepoint(c: PooledConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`rollback to savepoint "${name}"`));
  }

  async releaseSavepoint(c: PooledConnection, name: string): Promise<void> {
    await c.executeQuery(CompiledQuery.raw(`release savepoint "${name}"`));
  }

  async releaseConnection(c: PooledConnection): Promise<void> {
    c.reserved?.release();
    c.reserved = null;
  }

  async destroy(): Promise<void> {
    await this.pool.end({ timeout: 5 });
  }
}

export class PoolDialect implements Dialect {
  constructor(private readonly pool: Pool) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PoolDriver(this.pool);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

// ---- Migrations under a lock ---------------------------------------------------------------------------------

/** The advisory lock key under which nodes migrate (and install the change triggers) one at a time. */
const MIGRATION_LOCK = 7_301_915_042;

/**
 * Runs `work` (the migrations) while holding a session advisory lock on a connection of its own: nodes starting at
 * once wait for each other, and the later ones find nothing left to apply. The change-notification triggers are
 * (re)installed under the same lock, for every table the migrations left.
 */
export async function underMigrationLock<T>(pool: Pool, work: () => Promise<T>): Promise<T> {
  const lock = await pool.reserve();
  try {
    await lock`SELECT pg_advisory_lock(${MIGRATION_LOCK})`;
    try {
      const out = await work();
      await installChangeTriggers(lock);
      return out;
    } finally {
      await lock`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`;
    }
  } finally {
    lock.release();
  }
}

/**
 * Tables whose writes change nothing a cache keeps: the request budgets are taken from on every request, and a
 * notification for each would empty every node's caches all the time.
 */
const QUIET_TABLES = ["rate_limit_buckets"];

/** Every table but Kysely's own (and the quiet ones) notifies the change channel once per committing transaction that wrote it. */
async function installChangeTriggers(c: postgres.ReservedSql): Promise<void> {
  await c.unsafe(`CREATE OR REPLACE FUNCTION svc_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM pg_notify('${CHANGES_CHANNEL}', current_setting('application_name')); RETURN NULL; END $$`);
  const tables = await c<{ name: string }[]>`SELECT tablename AS name FROM pg_tables
    WHERE schemaname = current_schema() AND tablename NOT LIKE 'kysely_%' AND NOT (tablename = ANY(${QUIET_TABLES}))`;
  for (const t of tables) {
    await c.unsafe(`CREATE OR REPLACE TRIGGER svc_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "${t.name}"
      FOR EACH STATEMENT EXECUTE FUNCTION svc_notify_change()`);
  }
}

// ---- The change feed -------------------------------------------------------------------------------------------

const READ_KINDS = new Set(["SelectQueryNode"]);

/**
 * Knows when the database may have changed: a counter bumped by every write this process sends, combined with a
 * counter bumped by each notification another node (or `svc admin` in another process) sends when it commits.
 * Notifications arrive as soon as the other side commits; refreshing costs nothing.
 */
export class PostgresChangeFeed implements ChangeFeed, KyselyPlugin {
  private writes = 0;
  private external = 0;
  private listening: postgres.ListenMeta | null = null;

  constructor(private readonly nodeId: string) {}

  /** Subscribes to other nodes' commits; resolves once the subscription is in place. */
  async listen(pool: Pool): Promise<void> {
    this.listening = await pool.listen(
      CHANGES_CHANNEL,
      (from) => {
        if (from !== this.nodeId) this.external++;
      },
      // After a reconnect, anything may have been missed.
      () => {
        this.external++;
      },
    );
  }

  async stop(): Promise<void> {
    await this.listening?.unlisten().catch(() => undefined);
    this.listening = null;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (!READ_KINDS.has(args.node.kind)) this.writes++;
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  noteWrite(): void {
    this.writes++;
  }

  refreshExternal(): number {
    return this.external;
  }

  refreshExternalIfOlderThan(maxAgeMs: number): void {
    void maxAgeMs;
  }

  externalVersion(): number {
    return this.external;
  }

  version(): string {
    return `${this.writes}:${this.external}`;
  }
}

// ---- The hot statements -------------------------------------------------------------------------------------

/**
 * The run queue on PostgreSQL. Claims lock the rows they take with `FOR UPDATE SKIP LOCKED`, so nodes claiming at
 * once each get different runs and none waits for another.
 */
export class PostgresRunQueue implements RunQueueStore {
  /** Whom each remote runner served, for its claims' turns. */
  private readonly served = new RunnerServed();

  constructor(
    private readonly pool: Pool,
    private readonly db: Kysely<DB>,
    private readonly changes: PostgresChangeFeed,
  ) {}

  /**
   * The queued runs ranked in turns, as SQLite's rankedInTurns does (see src/db/sqlite.ts): the CTEs `waiting`,
   * `busy`, `busy_workspaces`, `heads` and `turns` a claim's UPDATE takes its runs from. A run's project turn is the
   * runs its project has running plus its place among the project's queued runs; its workspace turn is the runs its
   * workspace has running plus its place among the workspace's queued runs by project turn. Only the first `limit`
   * queued runs of each project are ranked (a skip-scan of the projects waiting, on runs_queue), and they are
   * locked as they are read (SKIP LOCKED): runs another node is claiming at that moment are passed over, so nodes
   * claiming at once take different runs instead of one of them finding none. `queued` narrows a project's queued
   * runs `q` to those the claimer may take (joins on `q`, then conditions); `project` narrows the projects (`p`)
   * ranked. `served` (a runner's claim: whom it served and how recently, runner-served.ts) breaks ties between equal
   * turns for the project, then the workspace, it served least recently; the turns then also give `workspace_served`.
   */
  private rankedInTurns(
    queued: { join: postgres.Fragment; filter: postgres.Fragment },
    project: postgres.Fragment,
    limit: number,
    served?: string,
  ): postgres.Fragment {
    // Ids are letters, digits and "_": a key of the JSON object as they are.
    const ranking =
      served === undefined
        ? { columns: this.pool``, turnColumns: this.pool``, projectTie: this.pool`` }
        : {
            columns: this.pool` COALESCE((${served}::text::jsonb ->> w.project_id)::bigint, 0) AS project_served,
              COALESCE((${served}::text::jsonb ->> p.workspace_id)::bigint, 0) AS workspace_served,`,
            turnColumns: this.pool` h.workspace_served,`,
            projectTie: this.pool` h.project_served,`,
          };
    return this.pool`
      WITH RECURSIVE
        waiting(project_id) AS (
          SELECT MIN(project_id) FROM runs WHERE status = 'queued'
          UNION ALL
          SELECT (SELECT MIN(project_id) FROM runs WHERE status = 'queued' AND project_id > w.project_id) FROM waiting w WHERE w.project_id IS NOT NULL),
        busy AS (SELECT project_id, COUNT(*) AS n FROM runs WHERE status = 'running' GROUP BY project_id),
        busy_workspaces AS (SELECT p.workspace_id, SUM(b.n) AS n FROM busy b JOIN projects p ON p.id = b.project_id GROUP BY p.workspace_id),
        heads AS (
          SELECT r.id, r.created_at, r.position, p.workspace_id,${ranking.columns}
            COALESCE(b.n, 0) + ROW_NUMBER() OVER (PARTITION BY w.project_id ORDER BY r.created_at, r.position, r.id) AS project_turn
          FROM waiting w
            JOIN projects p ON p.id = w.project_id${project}
            LEFT JOIN busy b ON b.project_id = w.project_id
            CROSS JOIN LATERAL (
              SELECT q.id, q.created_at, q.position FROM runs q${queued.join}
              WHERE q.status = 'queued' AND q.project_id = w.project_id
                AND ${queued.filter}
              ORDER BY q.created_at, q.position, q.id LIMIT ${limit} FOR UPDATE OF q SKIP LOCKED) r),
        turns AS (
          SELECT h.id, h.created_at, h.position, h.project_turn,${ranking.turnColumns}
            COALESCE(bw.n, 0) + ROW_NUMBER() OVER (PARTITION BY h.workspace_id ORDER BY h.project_turn,${ranking.projectTie} h.created_at, h.position, h.id) AS workspace_turn
          FROM heads h LEFT JOIN busy_workspaces bw ON bw.workspace_id = h.workspace_id)`;
  }

  /** The server's claim, in turns (rankedInTurns). Runs whose environment requires runner labels are left to remote runners. */
  async claimQueuedRuns(now: string, limit: number, workspaceCap: number): Promise<{ runs: ClaimedRunRow[]; environments: Map<string, StoredEnvironment> }> {
    const ranked = this.rankedInTurns(
      {
        join: this.pool``,
        filter: this.pool`(q.environment_id IS NULL OR q.environment_id NOT IN (SELECT id FROM environments WHERE runner_labels != '[]'))`,
      },
      this.pool``,
      limit,
    );
    const runs = await this.pool<ClaimedRunRow[]>`${ranked},
        chosen AS (
          SELECT id FROM turns WHERE ${workspaceCap}::int <= 0 OR workspace_turn <= ${workspaceCap}::int
          ORDER BY workspace_turn, project_turn, created_at, position, id LIMIT ${limit})
      UPDATE runs SET status = 'running', claim = claim + 1, started_at = ${now}, updated_at = ${now}
      WHERE id IN (SELECT id FROM chosen) AND status = 'queued'
      RETURNING id, claim, project_id, automation_id, automation_name, started_at, spec, environment_id, variables, one_run_secrets, attempts`;
    return { runs: [...runs], environments: await this.environmentsOf(runs) };
  }

  /**
   * In the same turns as claimQueuedRuns, the queued runs the runner may take: of its workspace only (when it has one), whose environment's
   * runner_labels it all has, browser runs only if it can. The runner's labels go as text (a parameter typed jsonb
   * would be sent as a JSON string of the text). Between equal turns the workspace, then the project, it served least
   * recently goes first (see src/db/runner-served.ts for why: by age alone, a backlog queued first took every turn of
   * a one-slot runner, which reports a run's end before it claims again).
   */
  async claimRunsForRunner(
    now: string,
    runner: RunnerClaimFilter,
    limit: number,
  ): Promise<{ runs: ClaimedRunRow[]; environments: Map<string, StoredEnvironment> }> {
    const ranked = this.rankedInTurns(
      {
        join: this.pool` LEFT JOIN environments e ON e.id = q.environment_id`,
        filter: this.pool`(e.id IS NULL OR e.runner_labels::jsonb <@ ${JSON.stringify(runner.labels)}::text::jsonb)
                AND (${runner.browser} OR (q.spec::jsonb ->> 'kind') IS DISTINCT FROM 'browser')`,
      },
      this.pool` AND (${runner.workspaceId}::text IS NULL OR p.workspace_id = ${runner.workspaceId}::text)`,
      limit,
      this.served.of(runner.runnerId),
    );
    const runs = await this.pool<(ClaimedRunRow & { workspace_id: string })[]>`${ranked},
        chosen AS (SELECT id FROM turns ORDER BY workspace_turn, workspace_served, project_turn, created_at, position, id LIMIT ${limit})
      UPDATE runs SET status = 'running', claim = claim + 1, started_at = ${now}, updated_at = ${now}, runner_id = ${runner.runnerId},
        lease_expires_at = ${runner.leaseExpiresAt}, runner_started_at = NULL
      FROM projects p
      WHERE runs.id IN (SELECT id FROM chosen) AND runs.status = 'queued' AND p.id = runs.project_id
      RETURNING runs.id, runs.claim, runs.project_id, runs.automation_id, runs.automation_name, runs.started_at, runs.spec, runs.environment_id,
        runs.variables, runs.one_run_secrets, runs.attempts, p.workspace_id`;
    if (runs.length > 0) this.served.note(runner.runnerId, [...new Set(runs.flatMap((r) => [r.project_id, r.workspace_id]))]);
    return { runs: runs.map(({ workspace_id: _workspace, ...run }) => run), environments: await this.environmentsOf(runs) };
  }

  /** The environments of claimed runs, as stored; notes the claim's write. */
  private async environmentsOf(runs: readonly ClaimedRunRow[]): Promise<Map<string, StoredEnvironment>> {
    const environments = new Map<string, StoredEnvironment>();
    if (runs.length > 0) this.changes.noteWrite();
    const ids = [...new Set(runs.map((r) => r.environment_id).filter((id): id is string => id !== null))];
    if (ids.length > 0) {
      const rows = await this.pool<StoredEnvironment[]>`
        SELECT id, name, variables, secrets, secrets_sealed, protected, allowed_hosts FROM environments WHERE id IN ${this.pool(ids)}`;
      for (const e of rows) environments.set(e.id, e);
    }
    return environments;
  }

  /**
   * Writes finished runs in one transaction, through the query builder's transaction so that `alongside` (the alert
   * outbox) commits or rolls back with them. A cancelled run still gets the results it reached; the automation's
   * last run moves only if it is this run.
   */
  async finishRuns(now: string, rows: FinishedRunRow[], alongside: (trx: Kysely<DB>, finished: FinishedRun[]) => Promise<void>): Promise<void> {
    if (rows.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      const finished: FinishedRun[] = [];
      for (const o of rows) {
        if (o.status === "cancelled") {
          await sql`UPDATE runs SET results = ${o.resultsJson}, summary = ${o.summaryJson}, attempts = ${o.attemptsJson}, updated_at = ${now}
            WHERE id = ${o.id} AND claim = ${o.claim} AND status = 'cancelled'`.execute(trx);
          continue;
        }
        const r =
          await sql<FinishedRun>`UPDATE runs SET status = ${o.status}, finished_at = ${o.finishedAt}, duration_ms = ${o.durationMs}, summary = ${o.summaryJson},
            error = ${o.error}, results = ${o.resultsJson}, attempts = ${o.attemptsJson}, updated_at = ${now}, rolled_up = 1,
            started_at = ${o.startedAt}
          WHERE id = ${o.id} AND status = 'running' AND claim = ${o.claim} RETURNING ${sql.raw(FINISHED_RUN_COLUMNS)}`.execute(trx);
        const row = r.rows[0];
        if (row) {
          await sql`UPDATE automations SET last_run_status = ${o.status}, last_run_at = ${o.finishedAt}
            WHERE id = ${o.automationId} AND last_run_id = ${o.id}`.execute(trx);
          finished.push(row);
        }
      }
      if (finished.length > 0) await alongside(trx, finished);
    });
    this.changes.noteWrite();
  }

  async claimNextGeneration(now: string, progressJson: string): Promise<ClaimedGenerationRow | null> {
    const rows = await this.pool<ClaimedGenerationRow[]>`
      UPDATE generations SET status = 'running', started_at = ${now}, updated_at = ${now}, progress = ${progressJson}
      WHERE id = (SELECT id FROM generations WHERE status = 'queued' ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, project_id, feature_id, strategy`;
    const row = rows[0] ?? null;
    if (row) this.changes.noteWrite();
    return row;
  }

  async runCountsByStatus(): Promise<{ status: string; n: number }[]> {
    const rows = await this.pool<{ status: string; n: number }[]>`SELECT status, COUNT(*)::int AS n FROM runs GROUP BY status`;
    return [...rows];
  }
}

/** How long readiness waits for the database before it reports it unreachable. */
const PROBE_TIMEOUT_MS = 3_000;

export class PostgresProbe implements StorageProbe {
  readonly backend = "postgres";
  constructor(
    private readonly pool: Pool,
    private readonly known: string[],
  ) {}

  /** A transaction that takes a transaction id (refused on a read-only server) and is rolled back. */
  async assertWritable(): Promise<void> {
    await this.bounded(async () => {
      const c = await this.pool.reserve();
      try {
        await c.unsafe("BEGIN READ WRITE");
        try {
          await c.unsafe("SELECT pg_current_xact_id()");
        } finally {
          await c.unsafe("ROLLBACK");
        }
      } finally {
        c.release();
      }
    });
  }

  async missingMigrations(): Promise<string[]> {
    const rows = await this.bounded(() => this.pool<{ name: string }[]>`SELECT name FROM kysely_migration`);
    const have = new Set(rows.map((r) => r.name));
    return this.known.filter((m) => !have.has(m));
  }

  private async bounded<T>(work: () => Promise<T>): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer from PostgreSQL within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    });
    const doing = work();
    doing.catch(() => undefined);
    try {
      return await Promise.race([doing, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** PostgreSQL's SQLSTATE codes (postgres.js puts them in `code`) in the core's words. */
export function classifyPostgresError(e: unknown): StorageErrorKind | null {
  if ((e as { name?: unknown })?.name !== "PostgresError") {
    // The pool could not reach the server: as for a locked SQLite file, the client should retry shortly.
    const code = (e as { code?: unknown })?.code;
    if (code === "CONNECTION_CLOSED" || code === "CONNECTION_ENDED" || code === "CONNECT_TIMEOUT" || code === "ECONNREFUSED") return "busy";
    return null;
  }
  const state = String((e as { code?: unknown }).code ?? "");
  if (state.startsWith("23")) return "constraint";
  if (state === "53100") return "disk_full";
  // serialization failure, deadlock, lock not available, too many connections, shutting down
  if (state === "40001" || state === "40P01" || state === "55P03" || state === "53300" || state.startsWith("57P")) return "busy";
  return null;
}
