// In-memory token buckets for the per-IP and per-workspace request limits.

export interface BucketVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available (only meaningful when refused). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class TokenBuckets {
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
    const missing = this.capacityPerHour - bucket.tokens;
    return {
      allowed,
      limit: this.capacityPerHour,
      remaining: Math.max(0, Math.floor(bucket.tokens)),
      resetSeconds: Math.ceil(missing / this.ratePerMs / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerMs / 1000)),
    };
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
