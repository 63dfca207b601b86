// Replaces secret values with *** in everything a run records (messages, requests, responses, logs).
export type Masker = (text: string) => string;

const MASK = "***";

/**
 * The secret as it can appear in what a run records: as written, JSON-escaped, and encoded the ways a URL
 * encodes it — encodeURIComponent, a form-encoded `query` value (space as +, ! ' ( ) ~ escaped), and what the
 * URL parser leaves of it in a path or a query string (it keeps / : @ & = + and more as they are) or a host name.
 */
function secretForms(v: string): string[] {
  const forms = [v, encodeURIComponent(v), JSON.stringify(v).slice(1, -1), new URLSearchParams([["", v]]).toString().slice(1)];
  try {
    const u = new URL("http://svc.invalid/");
    u.pathname = `/${v}`;
    forms.push(u.pathname.slice(1));
    u.search = `?${v}`;
    forms.push(u.search.slice(1));
    // In a host name the parser lowercases it (and writes non-ASCII as punycode); an invalid host is ignored.
    u.hostname = v;
    if (u.hostname !== "svc.invalid") forms.push(u.hostname);
  } catch {
    // A value the URL parser rejects cannot have been sent in a URL.
  }
  // Encoding only lengthens a value: a shorter form means the parser rewrote it (a/../b → b), and masking that
  // would hide unrelated text.
  return forms.filter((f) => f.length >= v.length);
}

/** null when there is nothing to hide, so the common case costs nothing. */
export function secretMasker(secrets: Record<string, string>): Masker | null {
  const needles = new Set<string>();
  for (const v of Object.values(secrets)) {
    if (typeof v !== "string" || v.length === 0) continue;
    for (const form of secretForms(v)) needles.add(form);
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
