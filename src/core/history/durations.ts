// Durations kept as a histogram on a log scale (buckets 5% apart), so daily roll-ups stay small whatever the
// number of runs and still give percentiles: a percentile read from it is within 2.5% of the exact one.
const RATIO = 1.05;
const LOG = Math.log(RATIO);

export type Histogram = Record<string, number>;

/** A stored histogram's value; a damaged one (not JSON, or not an object) counts as empty. */
export function readHistogram(json: string): Histogram {
  try {
    const v = JSON.parse(json);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Histogram) : {};
  } catch {
    return {};
  }
}

export const bucketOf = (ms: number): number => Math.floor(Math.log(Math.max(0, ms) + 1) / LOG);

/** The value a bucket stands for: its geometric middle. */
const bucketValue = (bucket: number): number => Math.max(0, Math.round(RATIO ** (bucket + 0.5) - 1));

export function addDuration(h: Histogram, ms: number): void {
  const b = String(bucketOf(ms));
  h[b] = (h[b] ?? 0) + 1;
}

export function mergeInto(target: Histogram, source: Histogram): void {
  for (const [b, n] of Object.entries(source)) target[b] = (target[b] ?? 0) + n;
}

/** The q-quantile (0–1) in ms, nearest rank; null for an empty histogram. */
export function percentile(h: Histogram, q: number): number | null {
  const buckets = Object.entries(h)
    .map(([b, n]) => [Number(b), n] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((a, [, n]) => a + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const [b, n] of buckets) {
    seen += n;
    if (seen >= rank) return bucketValue(b);
  }
  return bucketValue(buckets[buckets.length - 1]?.[0] ?? 0);
}
