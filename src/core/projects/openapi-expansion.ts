// Measures what an OpenAPI document becomes once its local $refs are followed, without building it: a schema
// referenced ten times by each of ten others is small as written and astronomically large expanded.

/** Nodes (objects, arrays and values) the document may have with every local `$ref` replaced by its target. */
export const MAX_EXPANDED_NODES = 500_000;
/** Levels of nesting the document may have, written or with its `$ref`s followed. */
export const MAX_EXPANDED_DEPTH = 100;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Where a `$ref` points inside the document itself ("#/components/schemas/Item"); anything else is never followed. */
export const isLocalRef = (ref: string): boolean => ref === "#" || ref.startsWith("#/");

/** The value a local `$ref` points to (RFC 6901 pointer, percent-decoded), or undefined when it points nowhere. */
export function resolveLocalRef(doc: unknown, ref: string): unknown {
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (pointer === "") return doc;
  let at: unknown = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(at) && /^(0|[1-9]\d*)$/.test(token)) at = at[Number(token)];
    else if (isObject(at) && Object.hasOwn(at, token)) at = at[token];
    else return undefined;
  }
  return at;
}

export interface DocumentProblem {
  /** Dotted path of the offending place in the document ("components.schemas.A.properties.p0"). */
  path: string;
  message: string;
}

interface Size {
  nodes: number;
  depth: number;
}

/**
 * The first bound the document breaks (a local `$ref` that points nowhere, nesting past MAX_EXPANDED_DEPTH, or an
 * expansion past MAX_EXPANDED_NODES), or null. Each object is measured once and remembered, so the work is linear
 * in the document as written, however far it would expand. A `$ref` back into its own ancestors counts as itself,
 * as a parser leaves such a circular reference in place.
 */
export function expansionProblem(doc: Obj): DocumentProblem | null {
  const known = new Map<object, Size>();
  const open = new Set<object>();
  const found: { problem: DocumentProblem | null } = { problem: null };
  const leaf: Size = { nodes: 1, depth: 1 };

  const path: string[] = [];
  const fail = (message: string): Size => {
    found.problem ??= { path: path.join("."), message };
    return leaf;
  };
  const tooDeep = `the document nests deeper than ${MAX_EXPANDED_DEPTH} levels (with its $refs followed); the limit is ${MAX_EXPANDED_DEPTH}`;
  const child = (key: string, value: unknown, level: number): Size => {
    path.push(key);
    const size = measure(value, level);
    path.pop();
    return size;
  };

  function measure(value: unknown, level: number): Size {
    if (found.problem) return leaf;
    if (typeof value !== "object" || value === null) return leaf;
    if (level > MAX_EXPANDED_DEPTH) {
      return fail(tooDeep);
    }
    const remembered = known.get(value);
    if (remembered) {
      if (level + remembered.depth > MAX_EXPANDED_DEPTH + 1) {
        return fail(tooDeep);
      }
      return remembered;
    }
    if (open.has(value)) return leaf;
    open.add(value);
    let size: Size = { nodes: 1, depth: 1 };
    const add = (child: Size) => {
      size = { nodes: Math.min(size.nodes + child.nodes, MAX_EXPANDED_NODES + 1), depth: Math.max(size.depth, child.depth + 1) };
    };
    const ref = isObject(value) && typeof value.$ref === "string" ? value.$ref : null;
    if (ref !== null && isLocalRef(ref)) {
      const target = resolveLocalRef(doc, ref);
      if (target === undefined) {
        open.delete(value);
        return fail(`Missing $ref pointer "${ref}"`);
      }
      // The reference object is replaced by its target: the target's size stands for the "$ref" entry.
      const t = measure(target, level + 1);
      size = { nodes: t.nodes, depth: t.depth };
      for (const [k, v] of Object.entries(value)) if (k !== "$ref") add(child(k, v, level + 1));
      if (size.nodes > MAX_EXPANDED_NODES) {
        open.delete(value);
        return fail(
          `the document expands past ${MAX_EXPANDED_NODES} nodes when its $refs are followed (the $ref to "${ref}" alone does); the limit is ${MAX_EXPANDED_NODES} nodes`,
        );
      }
    } else {
      const entries = Array.isArray(value) ? value.entries() : Object.entries(value);
      for (const [k, v] of entries) {
        add(child(String(k), v, level + 1));
        if (found.problem) break;
      }
    }
    open.delete(value);
    known.set(value, size);
    return size;
  }

  const total = measure(doc, 1);
  if (found.problem) return found.problem;
  if (total.nodes > MAX_EXPANDED_NODES) {
    return { path: "", message: `the document expands past ${MAX_EXPANDED_NODES} nodes when its $refs are followed; the limit is ${MAX_EXPANDED_NODES} nodes` };
  }
  return null;
}
