// Replaces secret values with *** in everything a run records (messages, requests, responses, logs).
export type Masker = (text: string) => string;

const MASK = "***";

/** null when there is nothing to hide, so the common case costs nothing. */
export function secretMasker(secrets: Record<string, string>): Masker | null {
  const needles = new Set<string>();
  for (const v of Object.values(secrets)) {
    if (typeof v !== "string" || v.length === 0) continue;
    needles.add(v);
    // The same secret as it appears in a URL or a JSON string.
    needles.add(encodeURIComponent(v));
    needles.add(JSON.stringify(v).slice(1, -1));
  }
  if (needles.size === 0) return null;
  const ordered = [...needles].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const n of ordered) if (out.includes(n)) out = out.split(n).join(MASK);
    return out;
  };
}

export function maskDeep<T>(value: T, mask: Masker): T {
  if (typeof value === "string") return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, mask)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    // Keys are the record's own field names (and header names), never secret: masking them would break the shape.
    for (const [k, v] of Object.entries(value)) out[k] = maskDeep(v, mask);
    return out as T;
  }
  return value;
}
