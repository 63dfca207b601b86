// Version tags of stored records (the ETag of every read of one record) and the If-Match precondition on changing
// them: a change made from a stale read is refused (412 precondition_failed) instead of silently overwriting.
import { createHash } from "node:crypto";
import { AppError } from "../manifest/errors";
import type { OpContext } from "./context";

interface Versioned {
  id: string;
  updated_at: string;
}

/** The strong ETag of a record: derived from its id and its updated_at, which every change moves forward. */
export function entityTag(record: Versioned): string {
  return `"${createHash("sha256").update(`${record.id}\n${record.updated_at}`).digest("base64url").slice(0, 27)}"`;
}

/** A record answer carries a tag when it is one stored record (an id, or a member's user_id, and an updated_at). */
export function tagOfAnswer(answer: unknown): string | null {
  if (typeof answer !== "object" || answer === null) return null;
  const { updated_at } = answer as Record<string, unknown>;
  const record = answer as Record<string, unknown>;
  const id = record.id ?? record.user_id;
  return typeof id === "string" && typeof updated_at === "string" ? entityTag({ id, updated_at }) : null;
}

/** If-Match as RFC 9110 reads it: `*`, or a list of tags (a weak tag never matches: the comparison is strong). */
export function ifMatchHolds(header: string, tag: string): boolean {
  const value = header.trim();
  if (value === "*") return true;
  return value
    .split(",")
    .map((t) => t.trim())
    .some((t) => t === tag);
}

/**
 * The precondition of a change to `current`: with If-Match, a stale tag is a 412 and the change is made only while
 * the record still has the updated_at it was checked at (the store's condition, so a concurrent change also loses).
 * Returns that updated_at for the store, or undefined without If-Match (the change is unconditional, as ever).
 */
export function expectVersion(ctx: OpContext, current: Versioned, noun: string): string | undefined {
  if (ctx.ifMatch === undefined) return undefined;
  if (!ifMatchHolds(ctx.ifMatch, entityTag(current))) throw staleVersion(noun, current);
  return current.updated_at;
}

export function staleVersion(noun: string, current: Versioned): AppError {
  return new AppError(
    "precondition_failed",
    `the ${noun} changed since it was read (If-Match does not match its ETag ${entityTag(current)}): read it again and redo the change, or send it without If-Match to overwrite`,
  );
}

/** The next updated_at of a record: now, but always after the previous one, so every change gives a new tag. */
export function nextStamp(previous: string): string {
  const now = Date.now();
  const prev = Date.parse(previous);
  return new Date(Number.isFinite(prev) && prev >= now ? prev + 1 : now).toISOString();
}
