// Replaces secret values with *** in everything a run records (messages, requests, responses, logs), and tells
// whether a text carries a secret at all (for the allowed-hosts check of protected environments).
export interface Masker {
  (text: string): string;
  /** For a text cut right after its end (an excerpt): the beginning of a secret left at the cut is masked too. */
  atCut(text: string): string;
  /** The name of a secret the text carries in any form masking recognises, or null. */
  find(text: string): string | null;
}

const MASK = "***";
/** How assertions mark a value they cut short: what comes before it may be the beginning of a secret. */
const CUT_MARK = "…";

/**
 * The text cut to `max` characters with the cut marked: every text a run records that is cut short must carry the
 * mark, or masking could not tell that the end may be the beginning of a secret (and would show most of it).
 */
export function cutText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}${CUT_MARK}` : text;
}

/**
 * The secret as it can appear in what a run records: as written, JSON-escaped, and encoded the ways a URL
 * encodes it — encodeURIComponent, a form-encoded `query` value (space as +, ! ' ( ) ~ escaped), and what the
 * URL parser leaves of it in a path or a query string (it keeps / : @ & = + and more as they are) or a host name.
 * Other escapings (`\u0026`, `\/`, `%7e`, any mix) are found by decoding the text instead (see `decoded`).
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

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const hexAt = (s: string, i: number, n: number) => {
  if (i + n > s.length) return -1;
  for (let k = 0; k < n; k++) if (!isHex(s.charCodeAt(i + k))) return -1;
  return Number.parseInt(s.slice(i, i + n), 16);
};
const JSON_SIMPLE: Record<string, string> = { "/": "/", '"': '"', "\\": "\\", n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" };

/** The text with JSON escapes (`\uXXXX`, `\/`, …) and URL escapes (`%XX` of UTF-8) decoded, and where each of
 * its characters came from in the text (start and end). With `plus`, a + is read as a space (form encoding). */
interface Decoded {
  text: string;
  from: Int32Array;
  to: Int32Array;
}

function decoded(s: string, plus: boolean): Decoded {
  let out = "";
  const from = new Int32Array(s.length);
  const to = new Int32Array(s.length);
  let n = 0;
  const push = (units: string, start: number, end: number) => {
    for (let k = 0; k < units.length; k++) {
      from[n] = start;
      to[n] = end;
      n++;
    }
    out += units;
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === "\\" && i + 1 < s.length) {
      const d = s[i + 1] as string;
      const u = d === "u" ? hexAt(s, i + 2, 4) : -1;
      if (u >= 0) {
        push(String.fromCharCode(u), i, i + 6);
        i += 6;
        continue;
      }
      const simple = JSON_SIMPLE[d];
      if (simple !== undefined) {
        push(simple, i, i + 2);
        i += 2;
        continue;
      }
    }
    if (c === "%") {
      const b0 = hexAt(s, i + 1, 2);
      if (b0 >= 0 && b0 < 0x80) {
        push(String.fromCharCode(b0), i, i + 3);
        i += 3;
        continue;
      }
      const len = b0 >= 0xf0 && b0 < 0xf8 ? 4 : b0 >= 0xe0 ? 3 : b0 >= 0xc0 ? 2 : 0;
      let cp = len === 4 ? b0 & 0x07 : len === 3 ? b0 & 0x0f : b0 & 0x1f;
      let ok = len > 0;
      for (let k = 1; ok && k < len; k++) {
        const b = s[i + 3 * k] === "%" ? hexAt(s, i + 3 * k + 1, 2) : -1;
        if (b < 0x80 || b > 0xbf) ok = false;
        else cp = (cp << 6) | (b & 0x3f);
      }
      if (ok && cp <= 0x10ffff) {
        push(String.fromCodePoint(cp), i, i + 3 * len);
        i += 3 * len;
        continue;
      }
    }
    push(plus && c === "+" ? " " : c, i, i + 1);
    i++;
  }
  return { text: out, from: from.subarray(0, n), to: to.subarray(0, n) };
}

/** How many times a text is decoded looking for a secret: a value JSON-escaped inside a JSON string (a body echoed
 * back as a string, an assertion message quoting a JSON body) is escaped twice, and once more in a log line. */
const DECODE_DEPTH = 3;

/**
 * The text decoded once, then again while escapes remain (up to DECODE_DEPTH times), each view mapping its
 * characters back to where they came from in the original text.
 */
function decodedLayers(s: string, plus: boolean): Decoded[] {
  const layers: Decoded[] = [];
  let view = decoded(s, plus);
  layers.push(view);
  for (let depth = 1; depth < DECODE_DEPTH && (view.text.includes("\\") || view.text.includes("%")); depth++) {
    const next = decoded(view.text, plus);
    if (next.text === view.text) break;
    const from = new Int32Array(next.text.length);
    const to = new Int32Array(next.text.length);
    for (let i = 0; i < next.text.length; i++) {
      from[i] = view.from[next.from[i] as number] as number;
      to[i] = view.to[(next.to[i] as number) - 1] as number;
    }
    view = { text: next.text, from, to };
    layers.push(view);
  }
  return layers;
}

/** An escape cut in its middle at the end of a text (`\u00`, `%C3`, `%E2%82`): the decoder leaves it as it is. */
const PARTIAL_ESCAPE = /(?:\\(?:u[0-9A-Fa-f]{0,3})?|(?:%[0-9A-Fa-f]{2})*%[0-9A-Fa-f]?|(?:%[0-9A-Fa-f]{2})+)$/;

/** KMP failure function of a needle, for finding the longest beginning of it that ends a text. */
function failureOf(needle: string): Int32Array {
  const f = new Int32Array(needle.length);
  let k = 0;
  for (let i = 1; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = f[k - 1] as number;
    if (needle[i] === needle[k]) k++;
    f[i] = k;
  }
  return f;
}

/** How many characters at the end of `text[0, end)` are the beginning of `needle` (linear time). */
function beginningAtEnd(text: string, end: number, needle: string, f: Int32Array): number {
  let k = 0;
  for (let i = Math.max(0, end - needle.length); i < end; i++) {
    while (k > 0 && (k === needle.length || text[i] !== needle[k])) k = f[k - 1] as number;
    if (text[i] === needle[k]) k++;
  }
  return k;
}

interface Needle {
  text: string;
  name: string;
  failure: Int32Array;
}

/** null when there is nothing to hide, so the common case costs nothing. */
export function secretMasker(secrets: Record<string, string>): Masker | null {
  if (Object.keys(secrets).length === 0) return null;
  const byForm = new Map<string, string>();
  const values: Needle[] = [];
  for (const [name, v] of Object.entries(secrets)) {
    if (typeof v !== "string" || v.length === 0) continue;
    values.push({ text: v, name, failure: failureOf(v) });
    for (const form of secretForms(v)) if (!byForm.has(form)) byForm.set(form, name);
  }
  if (values.length === 0) return null;
  const forms: Needle[] = [...byForm].sort((a, b) => b[0].length - a[0].length).map(([text, name]) => ({ text, name, failure: failureOf(text) }));
  const spaced = values.some((v) => v.text.includes(" "));
  // An escaped character is at most 6 characters of text (`\uXXXX`, or half of a 4-byte `%XX%XX%XX%XX`).
  const window = 6 * Math.max(...values.map((v) => v.text.length)) + 12;

  const views = (text: string): Decoded[] => {
    const out: Decoded[] = [];
    if (text.includes("\\") || text.includes("%")) out.push(...decodedLayers(text, false));
    if (spaced && text.includes("+")) out.push(...decodedLayers(text, true));
    return out;
  };

  /** The spans of the text that hold a whole secret. */
  const wholeSpans = (text: string, spans: [number, number][]) => {
    for (const f of forms) {
      for (let at = text.indexOf(f.text); at >= 0; at = text.indexOf(f.text, at + 1)) spans.push([at, at + f.text.length]);
    }
    for (const view of views(text)) {
      for (const v of values) {
        for (let at = view.text.indexOf(v.text); at >= 0; at = view.text.indexOf(v.text, at + 1)) {
          spans.push([view.from[at] as number, view.to[at + v.text.length - 1] as number]);
        }
      }
    }
  };

  /** The start of the beginning of a secret that ends at `cut` (the text goes no further), or -1. */
  const partialBefore = (text: string, cut: number): number => {
    let start = cut;
    for (const f of forms) {
      const k = beginningAtEnd(text, cut, f.text, f.failure);
      if (k > 0) start = Math.min(start, cut - k);
    }
    const lo = Math.max(0, cut - window);
    const tail = text.slice(lo, cut);
    const residue = PARTIAL_ESCAPE.exec(tail)?.[0].length ?? 0;
    for (const end of residue > 0 ? [tail.length, tail.length - residue] : [tail.length]) {
      const part = tail.slice(0, end);
      for (const view of [...decodedLayers(part, false), ...(spaced && part.includes("+") ? decodedLayers(part, true) : [])]) {
        for (const v of values) {
          const k = beginningAtEnd(view.text, view.text.length, v.text, v.failure);
          if (k > 0) start = Math.min(start, lo + (view.from[view.text.length - k] as number));
        }
      }
    }
    return start < cut ? start : -1;
  };

  const apply = (text: string, atEnd: boolean): string => {
    const spans: [number, number][] = [];
    wholeSpans(text, spans);
    const cuts: number[] = [];
    for (let at = text.indexOf(CUT_MARK); at >= 0; at = text.indexOf(CUT_MARK, at + 1)) cuts.push(at);
    if (atEnd) cuts.push(text.length);
    for (const cut of cuts) {
      const start = partialBefore(text, cut);
      if (start >= 0) spans.push([start, cut]);
    }
    if (spans.length === 0) return text;
    spans.sort((a, b) => a[0] - b[0]);
    let out = "";
    let pos = 0;
    for (const [start, end] of spans) {
      if (end <= pos) continue;
      out += start > pos ? `${text.slice(pos, start)}${MASK}` : out.endsWith(MASK) ? "" : MASK;
      pos = end;
    }
    out += text.slice(pos);
    return out;
  };

  const masker = ((text: string) => apply(text, false)) as Masker;
  masker.atCut = (text) => apply(text, true);
  masker.find = (text) => {
    for (const f of forms) if (text.includes(f.text)) return f.name;
    for (const view of views(text)) for (const v of values) if (view.text.includes(v.text)) return v.name;
    return null;
  };
  return masker;
}

/**
 * Fields whose value svc chose from a fixed list (a step's or an attempt's `status`): never a secret, and masking
 * one that happens to contain a secret's text (`failed` for a secret `e`, `cancelled`) would make the record unreadable.
 */
const OWN_WORDS = new Set(["status"]);

export function maskDeep<T>(value: T, mask: (text: string) => string): T {
  if (typeof value === "string") return mask(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, mask)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    // Keys are the record's own field names (and header names), never secret: masking them would break the shape.
    for (const [k, v] of Object.entries(value)) out[k] = OWN_WORDS.has(k) && typeof v === "string" ? v : maskDeep(v, mask);
    return out as T;
  }
  return value;
}

/** An excerpt with the secrets in it hidden, including the beginning of one that the cut left at its end. */
export function maskExcerpt(ex: { body: string; truncated: boolean }, mask: Masker | null): { body: string; truncated: boolean } {
  if (!mask) return ex;
  return { body: ex.truncated ? mask.atCut(ex.body) : mask(ex.body), truncated: ex.truncated };
}
