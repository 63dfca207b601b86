// The request budgets of several nodes, kept in PostgreSQL: a token bucket per IP address, workspace or sign-in
// key is one row, refilled and taken from by one `INSERT … ON CONFLICT DO UPDATE … RETURNING` under the row's lock,
// against the database's clock, so the nodes together admit exactly a budget's number, whatever node a request
// reaches. The table notifies no one (see installChangeTriggers): a take changes no data a cache keeps.
import type { SharedBucketTake, SharedBuckets } from "../core/storage";
import type { Pool } from "./postgres";

/** Tokens are counted in 1/3,600,000 of a token: a budget of N an hour then refills exactly N units a millisecond. */
const UNITS_PER_TOKEN = 3_600_000;
/** A bucket untouched for an hour is full again: as good as no row. */
const FULL_AFTER_MS = 3_600_000;
const PRUNE_EVERY_MS = 600_000;

const TAKE = `
INSERT INTO rate_limit_buckets AS b (bucket, tokens, updated_ms, taken)
VALUES ($1, $2::bigint - ${UNITS_PER_TOKEN}, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, 1)
ON CONFLICT (bucket) DO UPDATE SET
  tokens = CASE
    WHEN LEAST($2::bigint, b.tokens + LEAST(GREATEST(EXCLUDED.updated_ms - b.updated_ms, 0), ${FULL_AFTER_MS}) * $3::bigint) >= ${UNITS_PER_TOKEN}
    THEN LEAST($2::bigint, b.tokens + LEAST(GREATEST(EXCLUDED.updated_ms - b.updated_ms, 0), ${FULL_AFTER_MS}) * $3::bigint) - ${UNITS_PER_TOKEN}
    ELSE LEAST($2::bigint, b.tokens + LEAST(GREATEST(EXCLUDED.updated_ms - b.updated_ms, 0), ${FULL_AFTER_MS}) * $3::bigint)
  END,
  taken = CASE
    WHEN LEAST($2::bigint, b.tokens + LEAST(GREATEST(EXCLUDED.updated_ms - b.updated_ms, 0), ${FULL_AFTER_MS}) * $3::bigint) >= ${UNITS_PER_TOKEN}
    THEN 1 ELSE 0
  END,
  updated_ms = GREATEST(b.updated_ms, EXCLUDED.updated_ms)
RETURNING tokens, taken`;

export class PostgresBuckets implements SharedBuckets {
  private lastPrune = Date.now();

  constructor(private readonly pool: Pool) {}

  async take(bucket: string, capacityPerHour: number): Promise<SharedBucketTake> {
    // PostgreSQL's text cannot hold U+0000 (a key may carry what a client sent): stored as U+FFFD, as elsewhere.
    const name = bucket.replaceAll("\u0000", "\uFFFD");
    const rows = await this.pool.unsafe<{ tokens: number; taken: number }[]>(TAKE, [name, capacityPerHour * UNITS_PER_TOKEN, capacityPerHour], {
      prepare: true,
    });
    const row = rows[0];
    if (!row) throw new Error("the rate-limit bucket was not written");
    if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) this.prune();
    return { allowed: Number(row.taken) === 1, tokens: Number(row.tokens) / UNITS_PER_TOKEN };
  }

  /** Drops the buckets full again (untouched for an hour), now and then; a failure only leaves them for next time. */
  private prune(): void {
    this.lastPrune = Date.now();
    this.pool
      .unsafe(`DELETE FROM rate_limit_buckets WHERE updated_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - ${FULL_AFTER_MS}`)
      .catch(() => undefined);
  }
}
