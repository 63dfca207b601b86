// Expected browser URLs written as /…/ were unanchored regular expressions; a string is now an exact URL or a path,
// and a pattern is {"matches": "…"}. Saved automations (and the snapshots of runs still queued) keep their meaning.
import { type Kysely, sql } from "kysely";

/** RE2's inline form of the flags a JavaScript /…/flags literal could carry; the others change nothing here. */
const INLINE_FLAGS: Record<string, string> = { i: "i", m: "m", s: "s" };

/** The old reading: `/source/flags`, longer than `//`, not starting with `//`, and a valid JavaScript pattern. */
export function oldPatternToMatches(expected: string): { matches: string } | null {
  const m = /^\/(.+)\/([a-z]*)$/.exec(expected);
  if (!m || expected.length <= 2 || expected.startsWith("//")) return null;
  const [, source, flags] = m as unknown as [string, string, string];
  try {
    new RegExp(source, flags);
  } catch {
    return null; // the old code read an invalid pattern as a path: so does the new one.
  }
  const inline = [...new Set(flags)].map((f) => INLINE_FLAGS[f] ?? "").join("");
  return { matches: inline ? `(?${inline})${source}` : source };
}

/** The steps with every old-form expected URL rewritten; null when none was. */
export function rewriteSteps(steps: unknown): unknown[] | null {
  if (!Array.isArray(steps)) return null;
  let changed = false;
  const out = steps.map((step) => {
    if (step === null || typeof step !== "object") return step;
    const s = step as Record<string, unknown>;
    for (const key of ["expect", "wait_for"] as const) {
      const inner = s[key];
      if (inner === null || typeof inner !== "object" || Array.isArray(inner)) continue;
      const url = (inner as Record<string, unknown>).url;
      const rewritten = typeof url === "string" ? oldPatternToMatches(url) : null;
      if (rewritten) {
        changed = true;
        return { ...s, [key]: { ...(inner as Record<string, unknown>), url: rewritten } };
      }
    }
    return step;
  });
  return changed ? out : null;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const automations = await sql<{ id: string; steps: string }>`SELECT id, steps FROM automations WHERE steps LIKE '%"url"%'`.execute(db);
  for (const row of automations.rows) {
    const steps = rewriteSteps(parse(row.steps));
    if (steps) await sql`UPDATE automations SET steps = ${JSON.stringify(steps)} WHERE id = ${row.id}`.execute(db);
  }
  // A queued run executes its snapshot with the new reading: rewrite it too. Finished runs are history.
  const runs = await sql<{ id: string; spec: string }>`SELECT id, spec FROM runs WHERE status = 'queued' AND spec LIKE '%"url"%'`.execute(db);
  for (const row of runs.rows) {
    const spec = parse(row.spec);
    if (spec === null || typeof spec !== "object") continue;
    const steps = rewriteSteps((spec as { steps?: unknown }).steps);
    if (steps) await sql`UPDATE runs SET spec = ${JSON.stringify({ ...spec, steps })} WHERE id = ${row.id}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // {"matches": "…"} has no older spelling that every pattern fits; the rewritten values stay.
  void db;
}
