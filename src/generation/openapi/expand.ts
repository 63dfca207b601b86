// Follows the local $refs of the parts of an OpenAPI document a generator reads, as far as a node budget allows:
// a shared $ref is copied wherever it is used, so expanding without a bound can make exponentially many copies.
import { isLocalRef, MAX_EXPANDED_DEPTH, resolveLocalRef } from "../../core/projects/openapi-expansion";

/** Nodes one expanded part (a schema, a parameter, an example) may have. */
export const MAX_SCHEMA_NODES = 10_000;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export interface Expanded {
  value: unknown;
  /** True when the budget ran out: parts past it are left as {} and the value is incomplete. */
  cut: boolean;
}

export class RefExpander {
  constructor(private readonly doc: Obj) {}

  /** What a value stands for once its chain of local $refs is followed (not expanded further). */
  deref(value: unknown): unknown {
    let v = value;
    for (let hops = 0; hops < MAX_EXPANDED_DEPTH && isObject(v) && typeof v.$ref === "string" && isLocalRef(v.$ref); hops++) {
      const target = resolveLocalRef(this.doc, v.$ref);
      if (target === undefined) return v;
      v = target;
    }
    return v;
  }

  /**
   * A copy of the value with its local $refs replaced by copies of their targets, of at most `limit` nodes. As a
   * parser leaves them, a $ref back into its own ancestors (circular), an external one and a dangling one stay
   * `{"$ref": …}`; a $ref's sibling keys win over its target's.
   */
  expand(value: unknown, limit = MAX_SCHEMA_NODES): Expanded {
    let left = limit;
    let cut = false;
    const open = new Set<unknown>();
    const doc = this.doc;

    function copy(v: unknown, level: number): unknown {
      if (left <= 0 || level > MAX_EXPANDED_DEPTH) {
        cut = true;
        return typeof v === "object" && v !== null ? {} : v;
      }
      left--;
      if (typeof v !== "object" || v === null) return v;
      if (Array.isArray(v)) {
        const out: unknown[] = [];
        for (const x of v) {
          if (left <= 0) {
            cut = true;
            break;
          }
          out.push(copy(x, level + 1));
        }
        return out;
      }
      const ref = (v as Obj).$ref;
      if (typeof ref === "string") {
        const target = isLocalRef(ref) ? resolveLocalRef(doc, ref) : undefined;
        if (target === undefined || open.has(target)) return { $ref: ref };
        open.add(target);
        const resolved = copy(target, level + 1);
        open.delete(target);
        const siblings = Object.entries(v).filter(([k]) => k !== "$ref");
        if (siblings.length === 0 || !isObject(resolved)) return resolved;
        const merged: Obj = { ...resolved };
        for (const [k, x] of siblings) merged[k] = copy(x, level + 1);
        return merged;
      }
      const out: Obj = {};
      for (const [k, x] of Object.entries(v)) {
        if (left <= 0) {
          cut = true;
          break;
        }
        out[k] = copy(x, level + 1);
      }
      return out;
    }

    const result = copy(value, 1);
    return { value: result, cut };
  }
}
