// The SQLite dialect: everything specific to SQLite lives here — the connection's pragmas, the statement cache,
// the hot run-queue statements on the raw connection, the change feed, error classification, backups. It
// implements the interfaces the core owns (src/core/storage.ts); a PostgreSQL dialect would be one more module.
import { Database, type SQLQueryBindings, type Statement } from "bun:sqlite";
import {
  type DialectAdapter,
  type Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  SqliteAdapter,
  type SqliteDatabase,
  SqliteDialect,
  type UnknownRow,
} from "kysely";
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

/** Opens (creating if needed) the file with the pragmas svc relies on: WAL, foreign keys, a busy timeout. */
export function openSqliteFile(path: string, busyTimeoutMs: number): Database {
  const sqlite = new Database(path, { create: true, strict: false });
  sqlite.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  return sqlite;
}

/**
 * Prepared statements by their text, the least recently used dropped beyond STATEMENTS. bun:sqlite's own `query`
 * cache keeps about twenty: the server runs many more distinct statements than that, so nearly every one was
 * prepared again on every use (a tenth of the per-run cost; the claim's ranking alone takes ~150 µs to prepare).
 * Statements run to their end synchronously where they are taken (nothing here iterates one across an await), so
 * an evicted one is never in use when it is finalized.
 */
const STATEMENTS = 2000;
const caches = new WeakMap<Database, Map<string, Statement>>();

function cachedStatement<Row = unknown, Params extends SQLQueryBindings[] = SQLQueryBindings[]>(sqlite: Database, text: string): Statement<Row, Params> {
  let cache = caches.get(sqlite);
  if (!cache) {
    cache = new Map();
    caches.set(sqlite, cache);
  }
  const hit = cache.get(text);
  if (hit) {
    // Most recently used last: Map keeps insertion order.
    cache.delete(text);
    cache.set(text, hit);
    return hit as unknown as Statement<Row, Params>;
  }
  const made = sqlite.prepare(text);
  cache.set(text, made);
  if (cache.size > STATEMENTS) {
    const oldest = cache.keys().next().value as string;
    cache.get(oldest)?.finalize();
    cache.delete(oldest);
  }
  return made as unknown as Statement<Row, Params>;
}

/** Kysely's SQLite driver calls `prepare` for every query: it gets the cached statement. */
function withStatementCache(sqlite: Database): SqliteDatabase {
  return {
    close: () => {
      // A statement left unfinalized keeps the connection open past close(): SQLite would then never see its last
      // connection go, nor checkpoint and remove the log, and a stopped server's svc.sqlite would need its -wal beside it.
      for (const statement of caches.get(sqlite)?.values() ?? []) statement.finalize();
      caches.delete(sqlite);
      sqlite.close();
    },
    prepare: (sql: string) => cachedStatement(sqlite, sql),
  } as unknown as SqliteDatabase;
}

/** Kysely's SQLite adapter declares no transactional DDL, so its Migrator would apply migrations one statement
 * at a time; SQLite does roll DDL back, so declaring it makes a start's pending migrations one transaction. */
class TransactionalDdlAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
class TransactionalSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlAdapter();
  }
}

/** The Kysely dialect over an open connection (one connection: Kysely serializes its use). */
export function sqliteDialect(sqlite: Database): SqliteDialect {
  return new TransactionalSqliteDialect({ database: withStatementCache(sqlite) });
}

const READ_KINDS = new Set(["SelectQueryNode"]);

/**
 * Knows when the database may have changed: a counter bumped by every write this process sends through Kysely
 * (and by the hot statements below), combined with SQLite's data_version, which moves when ANOTHER connection
 * commits.
 */
export class SqliteChangeFeed implements ChangeFeed, KyselyPlugin {
  private writes = 0;
  private external = 0;
  private refreshedAt = Number.NEGATIVE_INFINITY;
  private readonly dataVersion: { get(): unknown };

  constructor(sqlite: Database) {
    this.dataVersion = sqlite.query("PRAGMA data_version");
    this.refreshExternal();
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    // Anything that is not a plain SELECT (inserts, updates, deletes, raw SQL, schema changes) counts as a write.
    if (!READ_KINDS.has(args.node.kind)) this.writes++;
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** Counts a write that bypassed Kysely (only the statements of this module do). */
  noteWrite(): void {
    this.writes++;
  }

  refreshExternal(): number {
    this.external = (this.dataVersion.get() as { data_version: number }).data_version;
    this.refreshedAt = performance.now();
    return this.external;
  }

  /**
   * The HTTP layer calls it per request with 1 ms: reading data_version costs ~2 µs, a third of a cached read,
   * and a commit by another process (`svc admin`, a restore) becomes visible at most 1 ms late. Writes of this
   * process are seen at once either way.
   */
  refreshExternalIfOlderThan(maxAgeMs: number): void {
    if (performance.now() - this.refreshedAt >= maxAgeMs) this.refreshExternal();
  }

  externalVersion(): number {
    return this.external;
  }

  version(): string {
    return `${this.writes}:${this.external}`;
  }
}

/**
 * Runs `work` on the raw connection while holding Kysely's connection, so it never lands inside (and is never
 * rolled back with) a transaction another request has open on the same connection.
 */
function holdingConnection<T>(db: Kysely<DB>, work: () => T): Promise<T> {
  return db.connection().execute(async () => work());
}

/** The server's own engine has no runner labels: it never takes runs whose environment requires some. */
const LOCAL_RUNS = "(q.environment_id IS NULL OR q.environment_id NOT IN (SELECT id FROM environments WHERE runner_labels != '[]'))";

/**
 * The queued runs ranked in turns, as the CTEs `waiting`, `busy`, `busy_workspaces`, `heads` and `turns` that a
 * claim's UPDATE takes its runs from (by `workspace_turn, project_turn, created_at, position, id`). A run's project
 * turn is the runs its project has running plus its place among the project's queued runs (oldest first); its
 * workspace turn is the runs its workspace has running plus its place among the workspace's queued runs taken by
 * project turn. Claiming by workspace turn, then project turn, then age is round-robin across workspaces, and
 * across projects within one: a workspace's backlog never keeps another workspace's run waiting for more than one
 * slot's turn.
 *
 * Only the first `limit` queued runs of each project can be claimed (the earlier ones of its project always come
 * first), so only those are ranked: a skip-scan of the projects with queued runs and `limit` index entries each, on
 * runs_queue (0006_fair_dispatch) — the cost grows with the projects waiting, not with the queue. `queued` narrows
 * a project's queued runs `q` to those the claimer may take (joins on `q`, then conditions); `project` narrows the
 * projects (`p`) ranked.
 *
 * The limit is written into the statement (one cached statement per limit, which is at most the slots): bound as
 * a parameter, it keeps SQLite from planning the ranking around it, and the claim costs five to ten times more.
 *
 * `served` (a runner's claim) names the parameter holding whom the claimer served and how recently (runner-served.ts,
 * a JSON object by id; ids are letters, digits and "_", so an id is its own JSON path): between equal turns, the
 * project and then the workspace it served least recently go first, instead of the oldest. The turns then also give
 * `workspace_served` to order by. Read with json_extract rather than joined from json_each: the join scanned the
 * object once per ranked run and made a runner's claim a third dearer; this costs about nothing.
 */
const rankedInTurns = (queued: { join: string; filter: string }, project: string, limit: number, served?: string) => `WITH RECURSIVE
  waiting(project_id) AS (
    SELECT MIN(project_id) FROM runs WHERE status = 'queued'
    UNION ALL
    SELECT (SELECT MIN(project_id) FROM runs WHERE status = 'queued' AND project_id > w.project_id) FROM waiting w WHERE w.project_id IS NOT NULL),
  busy AS (SELECT project_id, COUNT(*) AS n FROM runs WHERE status = 'running' GROUP BY project_id),
  busy_workspaces AS (SELECT p.workspace_id, SUM(b.n) AS n FROM busy b JOIN projects p ON p.id = b.project_id GROUP BY p.workspace_id),
  heads AS (
    SELECT r.id, r.created_at, r.position, p.workspace_id,${
      served
        ? ` COALESCE(json_extract(${served}, '$.' || w.project_id), 0) AS project_served, COALESCE(json_extract(${served}, '$.' || p.workspace_id), 0) AS workspace_served,`
        : ""
    }
      COALESCE(b.n, 0) + ROW_NUMBER() OVER (PARTITION BY r.project_id ORDER BY r.created_at, r.position, r.id) AS project_turn
    FROM waiting w JOIN projects p ON p.id = w.project_id${project} LEFT JOIN busy b ON b.project_id = w.project_id
      JOIN runs r ON r.id IN (
        SELECT q.id FROM runs q${queued.join}
        WHERE q.status = 'queued' AND q.project_id = w.project_id
          AND ${queued.filter}
        ORDER BY q.created_at, q.position, q.id LIMIT ${limit})),
  turns AS (
    SELECT h.id, h.created_at, h.position, h.project_turn,${served ? " h.workspace_served," : ""}
      COALESCE(bw.n, 0) + ROW_NUMBER() OVER (PARTITION BY h.workspace_id ORDER BY h.project_turn,${served ? " h.project_served," : ""} h.created_at, h.position, h.id) AS workspace_turn
    FROM heads h LEFT JOIN busy_workspaces bw ON bw.workspace_id = h.workspace_id)`;

/** What every claim returns of a run it took: a ClaimedRunRow (src/core/storage.ts). */
const CLAIMED_COLUMNS = "id, claim, project_id, automation_id, automation_name, started_at, spec, environment_id, variables, one_run_secrets, attempts";

/**
 * The server's claim: up to `limit` queued runs in turns (rankedInTurns). ?2 > 0 caps a workspace's turn (runs
 * beyond it stay queued). Runs whose environment requires runner labels are left to remote runners (LOCAL_RUNS).
 */
const claimInTurns = (limit: number) => `${rankedInTurns({ join: "", filter: LOCAL_RUNS }, "", limit)}
UPDATE runs SET status = 'running', claim = claim + 1, started_at = ?1, updated_at = ?1
WHERE id IN (SELECT id FROM turns WHERE ?2 <= 0 OR workspace_turn <= ?2 ORDER BY workspace_turn, project_turn, created_at, position, id LIMIT ${limit})
RETURNING ${CLAIMED_COLUMNS}`;

/**
 * The claim when one project has queued runs (the common case: a team's CI group run) and no workspace cap
 * applies: what claimInTurns would take, as that project's turns are then its runs oldest first, without ranking
 * them. A claim of a run or two costs half as much, and of sixteen a third less (claims of a few runs were most of
 * a run's cost on the server at low concurrency). With no project or several waiting it claims nothing, and the
 * caller ranks. The project is a subquery, not a parameter: bound, SQLite reads the project's queued runs at twice
 * the cost.
 */
const claimOneProject = (limit: number) => `UPDATE runs SET status = 'running', claim = claim + 1, started_at = ?1, updated_at = ?1
WHERE id IN (
  SELECT q.id FROM runs q
  WHERE q.status = 'queued' AND q.project_id = (SELECT MIN(project_id) FROM runs WHERE status = 'queued')
    AND (SELECT MAX(project_id) FROM runs WHERE status = 'queued') = (SELECT MIN(project_id) FROM runs WHERE status = 'queued')
    AND ${LOCAL_RUNS}
  ORDER BY q.created_at, q.position, q.id LIMIT ${limit})
RETURNING ${CLAIMED_COLUMNS}`;

/**
 * A remote runner's claim, in the same turns as claimInTurns (round-robin across workspaces, then projects, then
 * oldest first), among the runs it may take: of its workspace only (?4, when it has one), whose environment's
 * runner_labels it all has (?5), browser runs only if it can run a browser (?6). Between equal turns the workspace,
 * then the project, it served least recently (?7, runner-served.ts) goes first: it reports a finished run before it
 * claims again, so the workspace it just served no longer counts that run, and by age alone a backlog queued first
 * won every turn of a one-slot runner. It holds the runs under its lease.
 */
const runnerClaimInTurns = (limit: number) => `${rankedInTurns(
  {
    join: " LEFT JOIN environments e ON e.id = q.environment_id",
    filter: `(e.id IS NULL OR NOT EXISTS (SELECT 1 FROM json_each(e.runner_labels) l WHERE l.value NOT IN (SELECT value FROM json_each(?5))))
          AND (?6 = 1 OR json_extract(q.spec, '$.kind') IS NOT 'browser')`,
  },
  " AND (?4 IS NULL OR p.workspace_id = ?4)",
  limit,
  "?7",
)}
UPDATE runs SET status = 'running', claim = claim + 1, started_at = ?1, updated_at = ?1, runner_id = ?2, lease_expires_at = ?3, runner_started_at = NULL
WHERE id IN (SELECT id FROM turns ORDER BY workspace_turn, workspace_served, project_turn, created_at, position, id LIMIT ${limit})
RETURNING ${CLAIMED_COLUMNS}`;

/**
 * A whole number of runs to write into a statement, of a few sizes only: each size is a statement of its own,
 * prepared once (a fifth of a millisecond for the ranking), and a fresh server at 256 slots prepared hundreds in
 * its first group run. Exact up to 16, then rounded down to four sizes per doubling: the caller claims again for
 * the rest.
 */
function limitOf(limit: number): number {
  const n = Math.max(1, Math.min(10_000, Math.trunc(limit) || 1));
  if (n <= 16) return n;
  const step = 2 ** (Math.floor(Math.log2(n)) - 2);
  return Math.floor(n / step) * step;
}

/**
 * The few statements too hot for the query builder (Kysely's query building was a third of the per-run cost),
 * on the raw connection with cached prepared statements. Each takes the connection and notes its writes itself.
 */
export class SqliteRunQueue implements RunQueueStore {
  /** Whom each remote runner served, for its claims' turns. */
  private readonly served = new RunnerServed();

  constructor(
    private readonly sqlite: Database,
    private readonly db: Kysely<DB>,
    private readonly changes: SqliteChangeFeed,
  ) {}

  /** The environments of claimed runs, as stored (read under the connection the claim holds). */
  private environmentsOf(runs: ClaimedRunRow[]): Map<string, StoredEnvironment> {
    const environments = new Map<string, StoredEnvironment>();
    const read = cachedStatement<StoredEnvironment, [string]>(
      this.sqlite,
      "SELECT id, name, variables, secrets, secrets_sealed, protected, allowed_hosts FROM environments WHERE id = ?1",
    );
    for (const r of runs) {
      if (r.environment_id === null || environments.has(r.environment_id)) continue;
      const e = read.get(r.environment_id);
      if (e) environments.set(r.environment_id, e);
    }
    return environments;
  }

  /** Notes the workspaces and projects of the runs a runner just claimed (read under the connection the claim holds). */
  private servedNow(runnerId: string, runs: ClaimedRunRow[]): void {
    const workspaceOf = cachedStatement<{ workspace_id: string }, [string]>(this.sqlite, "SELECT workspace_id FROM projects WHERE id = ?1");
    const projects = new Set(runs.map((r) => r.project_id));
    const workspaces = new Set<string>();
    for (const id of projects) {
      const p = workspaceOf.get(id);
      if (p) workspaces.add(p.workspace_id);
    }
    this.served.note(runnerId, [...projects, ...workspaces]);
  }

  async claimQueuedRuns(now: string, limit: number, workspaceCap: number): Promise<{ runs: ClaimedRunRow[]; environments: Map<string, StoredEnvironment> }> {
    const claimed = await holdingConnection(this.db, () => {
      let runs: ClaimedRunRow[] = [];
      if (workspaceCap <= 0) runs = cachedStatement<ClaimedRunRow, [string]>(this.sqlite, claimOneProject(limitOf(limit))).all(now);
      if (runs.length === 0) runs = cachedStatement<ClaimedRunRow, [string, number]>(this.sqlite, claimInTurns(limitOf(limit))).all(now, workspaceCap);
      return { runs, environments: this.environmentsOf(runs) };
    });
    if (claimed.runs.length > 0) this.changes.noteWrite();
    return claimed;
  }

  async claimRunsForRunner(
    now: string,
    runner: RunnerClaimFilter,
    limit: number,
  ): Promise<{ runs: ClaimedRunRow[]; environments: Map<string, StoredEnvironment> }> {
    const claimed = await holdingConnection(this.db, () => {
      const runs = cachedStatement<ClaimedRunRow, [string, string, string, string | null, string, number, string]>(
        this.sqlite,
        runnerClaimInTurns(limitOf(limit)),
      ).all(
        now,
        runner.runnerId,
        runner.leaseExpiresAt,
        runner.workspaceId,
        JSON.stringify(runner.labels),
        runner.browser ? 1 : 0,
        this.served.of(runner.runnerId),
      );
      if (runs.length > 0) this.servedNow(runner.runnerId, runs);
      return { runs, environments: this.environmentsOf(runs) };
    });
    if (claimed.runs.length > 0) this.changes.noteWrite();
    return claimed;
  }

  /** A cancelled run still gets the results it reached; the automation's last run moves only if it is this run. */
  async finishRuns(now: string, rows: FinishedRunRow[], alongside: (trx: Kysely<DB>, finished: FinishedRun[]) => Promise<void>): Promise<void> {
    if (rows.length === 0) return;
    // The raw statements run on the connection the transaction holds, so they commit or roll back with it.
    await this.db.transaction().execute(async (trx) => {
      const finished = this.applyFinish(now, rows);
      if (finished.length > 0) await alongside(trx, finished);
    });
    this.changes.noteWrite();
  }

  /** The finishing statements; answers the runs it finished. */
  private applyFinish(now: string, batch: FinishedRunRow[]): FinishedRun[] {
    const finish = cachedStatement<FinishedRun, (string | number | null)[]>(
      this.sqlite,
      `UPDATE runs SET status = ?1, finished_at = ?2, duration_ms = ?3, summary = ?4, error = ?5, results = ?6, attempts = ?7, updated_at = ?8, rolled_up = 1,
         started_at = ?11
       WHERE id = ?9 AND status = 'running' AND claim = ?10 RETURNING ${FINISHED_RUN_COLUMNS}`,
    );
    const keepCancelled = cachedStatement(
      this.sqlite,
      "UPDATE runs SET results = ?1, summary = ?2, attempts = ?3, updated_at = ?4 WHERE id = ?5 AND claim = ?6 AND status = 'cancelled'",
    );
    const lastRun = cachedStatement(this.sqlite, "UPDATE automations SET last_run_status = ?1, last_run_at = ?2 WHERE id = ?3 AND last_run_id = ?4");
    const finished: FinishedRun[] = [];
    for (const o of batch) {
      if (o.status === "cancelled") {
        keepCancelled.run(o.resultsJson, o.summaryJson, o.attemptsJson, now, o.id, o.claim);
        continue;
      }
      const r = finish.get(o.status, o.finishedAt, o.durationMs, o.summaryJson, o.error, o.resultsJson, o.attemptsJson, now, o.id, o.claim, o.startedAt);
      if (r) {
        lastRun.run(o.status, o.finishedAt, o.automationId, o.id);
        finished.push(r);
      }
    }
    return finished;
  }

  async claimNextGeneration(now: string, progressJson: string): Promise<ClaimedGenerationRow | null> {
    const row = await holdingConnection(this.db, () =>
      cachedStatement<ClaimedGenerationRow, [string, string]>(
        this.sqlite,
        `UPDATE generations SET status = 'running', started_at = ?1, updated_at = ?1, progress = ?2
           WHERE id = (SELECT id FROM generations WHERE status = 'queued' ORDER BY created_at, id LIMIT 1) AND status = 'queued'
           RETURNING id, project_id, feature_id, strategy`,
      ).get(now, progressJson),
    );
    if (row) this.changes.noteWrite();
    return row;
  }

  /** One grouped query on the status index. */
  runCountsByStatus(): Promise<{ status: string; n: number }[]> {
    return holdingConnection(this.db, () =>
      cachedStatement<{ status: string; n: number }, []>(this.sqlite, "SELECT status, COUNT(*) AS n FROM runs GROUP BY status").all(),
    );
  }
}

/** How long readiness waits for the server's own connection before it looks at the file through its own. */
const PROBE_LOCK_WAIT_MS = 3_000;

export class SqliteProbe implements StorageProbe {
  readonly backend = "sqlite";
  private side: Database | null = null;

  constructor(
    private readonly sqlite: Database,
    private readonly db: Kysely<DB>,
    private readonly path: string,
    private readonly known: string[],
  ) {}

  /** BEGIN IMMEDIATE takes the write lock (within the busy timeout) without writing anything. */
  async assertWritable(): Promise<void> {
    await this.probe((c) => c.exec("BEGIN IMMEDIATE; ROLLBACK;"));
  }

  async missingMigrations(): Promise<string[]> {
    const applied = await this.probe((c) =>
      c
        .query<{ name: string }, []>("SELECT name FROM kysely_migration")
        .all()
        .map((r) => r.name),
    );
    const have = new Set(applied);
    return this.known.filter((m) => !have.has(m));
  }

  /**
   * On the server's connection once its current work is done (a transaction in progress is waited for, never
   * broken into). Work stuck on that connection must not hang readiness, though: past PROBE_LOCK_WAIT_MS the
   * file is asked through a connection of the probe's own, which does not wait for locks (busy_timeout 0).
   */
  private async probe<T>(work: (c: Database) => T): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = Symbol("late");
    const onMain = holdingConnection(this.db, () => work(this.sqlite));
    const waited = new Promise<typeof late>((resolve) => {
      timer = setTimeout(() => resolve(late), PROBE_LOCK_WAIT_MS);
    });
    try {
      const first = await Promise.race([onMain, waited]);
      if (first !== late) return first;
    } finally {
      clearTimeout(timer);
    }
    onMain.catch(() => undefined); // it runs once the connection frees; its answer is no longer wanted
    if (this.side === null) {
      this.side = new Database(this.path, { readwrite: true, create: false });
      this.side.exec("PRAGMA busy_timeout = 0");
    }
    return work(this.side);
  }

  close(): void {
    this.side?.close();
    this.side = null;
  }
}

/** SQLite's result codes (and, for errors raised before a code is set, its messages) in the core's words. */
export function classifySqliteError(e: unknown): StorageErrorKind | null {
  const code = (e as { code?: unknown })?.code;
  const text = typeof code === "string" ? code : "";
  const msg = (e as Error)?.message ?? "";
  if (text.startsWith("SQLITE_BUSY") || text.startsWith("SQLITE_LOCKED") || /database is locked/i.test(msg)) return "busy";
  if (text.startsWith("SQLITE_FULL") || /database or disk is full/i.test(msg)) return "disk_full";
  if (text.startsWith("SQLITE_CONSTRAINT")) return "constraint";
  return null;
}

/** A consistent online copy of the database file as a plain SQLite file, without migrating the source. */
export function backupSqliteFile(source: string, outFile: string, busyTimeoutMs: number): void {
  const sqlite = new Database(source, { readwrite: true, create: false });
  try {
    sqlite.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    sqlite.query("VACUUM INTO ?").run(outFile);
  } finally {
    sqlite.close();
  }
}

/** What a backup file holds, read without changing it. */
export interface BackupContents {
  /** Problems the integrity check found; empty when the file is intact. */
  damage: string[];
  /** The migrations applied to it (read only when intact). */
  migrations: string[];
}

export class UnreadableBackupError extends Error {}

/**
 * Throws UnreadableBackupError when the file cannot be opened as SQLite; any other error means the file opened
 * but is not an svc database.
 */
/** The migrations a database file holds, read without changing it (an empty list for a file svc never set up). */
export function appliedSqliteMigrations(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const table = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'").get();
    if (!table) return [];
    return db
      .query<{ name: string }, []>("SELECT name FROM kysely_migration")
      .all()
      .map((r) => r.name);
  } finally {
    db.close();
  }
}

export function readSqliteBackup(file: string): BackupContents {
  let db: Database;
  try {
    db = new Database(file, { readonly: true });
  } catch (e) {
    throw new UnreadableBackupError((e as Error).message);
  }
  try {
    const integrity = db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").all();
    if (integrity.length !== 1 || integrity[0]?.integrity_check !== "ok") {
      return { damage: integrity.map((r) => r.integrity_check), migrations: [] };
    }
    const migrations = db
      .query<{ name: string }, []>("SELECT name FROM kysely_migration")
      .all()
      .map((r) => r.name);
    return { damage: [], migrations };
  } finally {
    db.close();
  }
}

/** The ids of the runs in a database file. */
export function runIdsInSqliteFile(file: string): string[] {
  const copy = new Database(file, { readonly: true });
  try {
    return copy
      .query<{ id: string }, []>("SELECT id FROM runs")
      .all()
      .map((r) => r.id);
  } finally {
    copy.close();
  }
}
