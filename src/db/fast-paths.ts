// The few statements too hot for the query builder (claiming and finishing runs, claiming generations,
// counting runs for metrics, readiness probes), written for SQLite on the raw connection with cached prepared
// statements. Kysely's query building was a third of the per-run cost. They are the only SQLite-specific SQL
// outside migrations, and the core reaches them through this interface alone, so another backend implements
// the same methods.
import type { Database } from "bun:sqlite";

export interface ClaimedRunRow {
  id: string;
  claim: number;
  project_id: string;
  automation_id: string;
  automation_name: string;
  started_at: string;
  spec: string;
  environment_id: string | null;
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
  status: string;
  finishedAt: string;
  durationMs: number;
  error: string | null;
  summaryJson: string;
  resultsJson: string;
  attemptsJson: string;
}

export interface ClaimedGenerationRow {
  id: string;
  project_id: string;
  feature_id: string;
  strategy: string;
}

export class FastPaths {
  constructor(private readonly sqlite: Database) {}

  /** Marks up to `limit` of the oldest queued runs `running` (one statement: no two workers get the same run). */
  claimQueuedRuns(now: string, limit: number): ClaimedRunRow[] {
    return this.sqlite
      .query<ClaimedRunRow, [string, string, number]>(
        `UPDATE runs SET status = 'running', claim = claim + 1, started_at = ?1, updated_at = ?2
         WHERE id IN (SELECT id FROM runs WHERE status = 'queued' ORDER BY created_at LIMIT ?3)
         RETURNING id, claim, project_id, automation_id, automation_name, started_at, spec, environment_id`,
      )
      .all(now, now, limit);
  }

  /** An environment as stored (variables and secrets as JSON text, secrets sealed), or null when it no longer exists. */
  environment(id: string): StoredEnvironment | null {
    return this.sqlite
      .query<StoredEnvironment, [string]>("SELECT id, name, variables, secrets, secrets_sealed, protected, allowed_hosts FROM environments WHERE id = ?1")
      .get(id);
  }

  /**
   * Writes finished runs in one transaction. A run no longer `running` under this claim is not overwritten; a
   * cancelled one still gets the results it reached; the automation's last run moves only if it is this run.
   */
  finishRuns(now: string, rows: FinishedRunRow[]): void {
    const finish = this.sqlite.query(
      `UPDATE runs SET status = ?1, finished_at = ?2, duration_ms = ?3, summary = ?4, error = ?5, results = ?6, attempts = ?7, updated_at = ?8
       WHERE id = ?9 AND status = 'running' AND claim = ?10`,
    );
    const keepCancelled = this.sqlite.query(
      "UPDATE runs SET results = ?1, summary = ?2, attempts = ?3, updated_at = ?4 WHERE id = ?5 AND claim = ?6 AND status = 'cancelled'",
    );
    const lastRun = this.sqlite.query("UPDATE automations SET last_run_status = ?1, last_run_at = ?2 WHERE id = ?3 AND last_run_id = ?4");
    this.sqlite.transaction((batch: FinishedRunRow[]) => {
      for (const o of batch) {
        if (o.status === "cancelled") {
          keepCancelled.run(o.resultsJson, o.summaryJson, o.attemptsJson, now, o.id, o.claim);
          continue;
        }
        const r = finish.run(o.status, o.finishedAt, o.durationMs, o.summaryJson, o.error, o.resultsJson, o.attemptsJson, now, o.id, o.claim);
        if (r.changes > 0) lastRun.run(o.status, o.finishedAt, o.automationId, o.id);
      }
    })(rows);
  }

  /** Marks the oldest queued generation `running` (one statement: no two workers take the same job). */
  claimNextGeneration(now: string, progressJson: string): ClaimedGenerationRow | null {
    return this.sqlite
      .query<ClaimedGenerationRow, [string, string]>(
        `UPDATE generations SET status = 'running', started_at = ?1, updated_at = ?1, progress = ?2
         WHERE id = (SELECT id FROM generations WHERE status = 'queued' ORDER BY created_at, id LIMIT 1) AND status = 'queued'
         RETURNING id, project_id, feature_id, strategy`,
      )
      .get(now, progressJson);
  }

  /** Runs per status (one grouped query on the status index). */
  runCountsByStatus(): { status: string; n: number }[] {
    return this.sqlite.query<{ status: string; n: number }, []>("SELECT status, COUNT(*) AS n FROM runs GROUP BY status").all();
  }

  /** Throws unless a write transaction can be opened now (within the busy timeout); leaves nothing behind. */
  assertWritable(): void {
    this.sqlite.exec("BEGIN IMMEDIATE; ROLLBACK;");
  }

  /** The names of the migrations applied to this database. */
  appliedMigrations(): string[] {
    return this.sqlite.query<{ name: string }, []>("SELECT name FROM kysely_migration").all().map((r) => r.name);
  }
}
