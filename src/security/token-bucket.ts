// Token buckets for the per-IP and per-workspace request limits and the sign-in limits: in this process's memory
// (one SQLite node), or in the database every node shares (PostgreSQL). Both answer with the same verdict.

export interface BucketVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available (only meaningful when refused). */
  retryAfterSeconds: number;
}

/** A budget of requests an hour, by key (an address, a workspace): sync in memory, a promise when shared. */
export interface RequestBudget {
  readonly capacityPerHour: number;
  take(key: string): BucketVerdict | Promise<BucketVerdict>;
}

/** Buckets kept where every node takes from them (src/core/storage.ts SharedBuckets). */
export interface SharedBucketStore {
  take(bucket: string, capacityPerHour: number): Promise<{ allowed: boolean; tokens: number }>;
}

/** The verdict for a bucket of `capacityPerHour` that holds `tokens` after the take. */
export function bucketVerdict(capacityPerHour: number, tokens: number, allowed: boolean): BucketVerdict {
  const ratePerMs = capacityPerHour / 3_600_000;
  const missing = capacityPerHour - tokens;
  return {
    allowed,
    limit: capacityPerHour,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.ceil(missing / ratePerMs / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / ratePerMs / 1000)),
  };
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class TokenBuckets implements RequestBudget {
  private readonly buckets = new Map<string, Bucket>();
  private readonly ratePerMs: number;

  constructor(
    readonly capacityPerHour: number,
    private readonly maxKeys = 100_000,
  ) {
    this.ratePerMs = capacityPerHour / 3_600_000;
  }

  take(key: string, nowMs = Date.now()): BucketVerdict {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.evictFull(nowMs);
      bucket = { tokens: this.capacityPerHour, updatedMs: nowMs };
      this.buckets.set(key, bucket);
    } else {
      const refill = (nowMs - bucket.updatedMs) * this.ratePerMs;
      bucket.tokens = Math.min(this.capacityPerHour, bucket.tokens + refill);
      bucket.updatedMs = nowMs;
    }
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return bucketVerdict(this.capacityPerHour, bucket.tokens, allowed);
  }

  /** Drops buckets that have refilled completely: they hold no state worth keeping. */
  private evictFull(nowMs: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + (nowMs - b.updatedMs) * this.ratePerMs >= this.capacityPerHour) this.buckets.delete(key);
    }
    if (this.buckets.size >= this.maxKeys) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
  }
}

/** A budget whose buckets live in the shared store, under `name` (one store holds every kind of budget). */
export class SharedTokenBuckets implements RequestBudget {
  constructor(
    private readonly store: SharedBucketStore,
    private readonly name: string,
    readonly capacityPerHour: number,
  ) {}

  async take(key: string): Promise<BucketVerdict> {
    const { allowed, tokens } = await this.store.take(`${this.name}:${key}`, this.capacityPerHour);
    return bucketVerdict(this.capacityPerHour, tokens, allowed);
  }
}

/** The budget `name` of `capacityPerHour`: shared when the store is (several nodes), else in this process's memory. */
export function requestBudget(name: string, capacityPerHour: number, shared: SharedBucketStore | undefined): RequestBudget {
  return shared ? new SharedTokenBuckets(shared, name, capacityPerHour) : new TokenBuckets(capacityPerHour);
}
