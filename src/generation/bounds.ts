// The bounds of one generation: how much it may produce (each draft's steps and all its drafts, measured as JSON
// text, since a small document or page can describe enormous drafts) and how it shares the server's one thread.
import type { GeneratedDraft } from "../core/generations/queue";

/** The steps of one draft, as JSON text (characters). */
export const MAX_DRAFT_STEPS_CHARS = 256 * 1024;
/** All the drafts of one generation, as JSON text (characters). */
export const MAX_GENERATION_CHARS = 8 * 1024 * 1024;

const size = (chars: number) => (chars >= 1024 * 1024 ? `${chars / 1024 / 1024} MB` : `${chars / 1024} KB`);

export const draftTooBig = (name: string) => `Left out "${name}": its steps take more than ${size(MAX_DRAFT_STEPS_CHARS)} as JSON (the limit for one draft)`;
export const GENERATION_FULL = `the drafts of one generation take at most ${size(MAX_GENERATION_CHARS)} as JSON (the limit for one generation)`;

/**
 * The length of `JSON.stringify(value)`, counted only until it passes `limit` (then some number above it), so a
 * value that shares one large part many times costs no more than the limit to measure.
 */
export function jsonLengthUpTo(value: unknown, limit: number): number {
  let total = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && total <= limit) {
    const v = pending.pop();
    if (Array.isArray(v)) {
      total += 2 + Math.max(0, v.length - 1);
      for (let i = v.length - 1; i >= 0; i--) pending.push(v[i] === undefined ? null : v[i]);
    } else if (typeof v === "object" && v !== null) {
      const entries = Object.entries(v).filter(([, x]) => x !== undefined && typeof x !== "function");
      total += 2 + Math.max(0, entries.length - 1);
      for (const [k, x] of entries) {
        total += JSON.stringify(k).length + 1;
        pending.push(x);
      }
    } else {
      total += (JSON.stringify(v) ?? "null").length;
    }
  }
  return total;
}

/** Admits drafts while they stay within the bounds, and says why when one is not. */
export class OutputMeter {
  private total = 0;

  /** "fits" (counted), "too big" (its steps alone pass the draft bound) or "full" (the generation's bound would be passed). */
  admit(draft: GeneratedDraft): "fits" | "too big" | "full" {
    const steps = jsonLengthUpTo(draft.steps, MAX_DRAFT_STEPS_CHARS);
    if (steps > MAX_DRAFT_STEPS_CHARS) return "too big";
    const whole = steps + jsonLengthUpTo({ ...draft, steps: [] }, MAX_GENERATION_CHARS);
    if (this.total + whole > MAX_GENERATION_CHARS) return "full";
    this.total += whole;
    return "fits";
  }
}

/** Lets the server answer requests between two pieces of a long computation on its one thread. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
