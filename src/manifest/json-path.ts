// JSON paths for assertions and captures: $.a.b, $['a b'], $.items[0], $.items[-1], $.items[*].id, $.items.length.
import { TextMemo } from "../memo";

type Segment = { key: string } | { index: number } | { all: true };

export class JsonPathError extends Error {}

/** Parsed once per distinct path (the same assertions run again and again); callers never change what they get. */
const parsed = new TextMemo<Segment[]>(5000);

export function parseJsonPath(path: string): Segment[] {
  return parsed.get(path, () => parseFresh(path));
}

function parseFresh(path: string): Segment[] {
  const segments: Segment[] = [];
  let i = 0;
  const src = path.trim();
  if (src.startsWith("$")) i = 1;
  else if (src.length > 0 && !src.startsWith(".") && !src.startsWith("[")) {
    // A bare "id" or "items[0]" means "$.id": users often leave the root out.
    return parseJsonPath(`$.${src}`);
  }
  while (i < src.length) {
    const c = src[i];
    if (c === ".") {
      i++;
      if (src[i] === "*") {
        segments.push({ all: true });
        i++;
        continue;
      }
      const m = /^[^.[\]]+/.exec(src.slice(i));
      if (!m) throw new JsonPathError(`invalid JSON path "${path}": a name is missing after "." at ${i}`);
      segments.push({ key: m[0] });
      i += m[0].length;
    } else if (c === "[") {
      const close = findClose(src, i);
      if (close < 0) throw new JsonPathError(`invalid JSON path "${path}": "[" is not closed`);
      const inner = src.slice(i + 1, close).trim();
      if (inner === "*") segments.push({ all: true });
      else if (/^-?\d+$/.test(inner)) segments.push({ index: Number(inner) });
      else if (/^(['"]).*\1$/.test(inner)) segments.push({ key: inner.slice(1, -1) });
      else throw new JsonPathError(`invalid JSON path "${path}": [${inner}] is neither an index, * nor a quoted name`);
      i = close + 1;
    } else {
      throw new JsonPathError(`invalid JSON path "${path}": unexpected "${c}" at ${i}`);
    }
  }
  return segments;
}

function findClose(src: string, open: number): number {
  let quote: string | null = null;
  for (let j = open + 1; j < src.length; j++) {
    const ch = src[j];
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "]") return j;
  }
  return -1;
}

/** `found: false` when the path leads nowhere; a wildcard yields the array of what each element leads to. */
export function readJsonPath(root: unknown, path: string): { found: boolean; value: unknown } {
  return walk(root, parseJsonPath(path), 0);
}

function walk(value: unknown, segments: Segment[], at: number): { found: boolean; value: unknown } {
  if (at === segments.length) return { found: true, value };
  const seg = segments[at] as Segment;
  if ("all" in seg) {
    const items = Array.isArray(value) ? value : value !== null && typeof value === "object" ? Object.values(value) : null;
    if (!items) return { found: false, value: undefined };
    const out: unknown[] = [];
    for (const item of items) {
      const r = walk(item, segments, at + 1);
      if (r.found) out.push(r.value);
    }
    return { found: true, value: out };
  }
  if ("index" in seg) {
    if (!Array.isArray(value)) return { found: false, value: undefined };
    const idx = seg.index < 0 ? value.length + seg.index : seg.index;
    if (idx < 0 || idx >= value.length) return { found: false, value: undefined };
    return walk(value[idx], segments, at + 1);
  }
  if (Array.isArray(value) || typeof value === "string") {
    if (seg.key === "length") return walk(value.length, segments, at + 1);
    return { found: false, value: undefined };
  }
  if (value === null || typeof value !== "object" || !Object.hasOwn(value, seg.key)) return { found: false, value: undefined };
  return walk((value as Record<string, unknown>)[seg.key], segments, at + 1);
}
