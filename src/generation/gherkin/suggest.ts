// Finds the step phrase nearest to a line that matched none, so the warning can suggest a fix.
import { PHRASES } from "./phrases";

/** Quoted values and numbers are placeholders: a line is compared with a phrase by its words only. */
function words(text: string): string[] {
  return text
    .trim()
    .toLowerCase()
    .replace(/"(?:[^"\\]|\\.)*"/g, " _q_ ")
    .replace(/\b\d+\b/g, " _n_ ")
    .split(/[^a-z_]+/)
    .filter(Boolean)
    .map((w) => SYNONYMS[w] ?? w);
}

/** Words people write for the phrases' own verbs and nouns. */
const SYNONYMS: Record<string, string> = {
  press: "click",
  tap: "click",
  hit: "click",
  submit: "click",
  choose: "click",
  type: "fill",
  enter: "fill",
  input: "fill",
  write: "fill",
  go: "open",
  visit: "open",
  navigate: "open",
  browse: "open",
  load: "open",
  sees: "see",
  shows: "see",
  displays: "see",
  visible: "see",
  contains: "contain",
  includes: "contain",
  code: "status",
  request: "send",
  call: "send",
  post: "send",
  get: "send",
  put: "send",
  patch: "send",
  delete: "send",
  url: "url",
  address: "url",
  page: "url",
  location: "url",
};

/** Words that say nothing about which phrase was meant. */
const FILLER = new Set(["i", "the", "a", "an", "should", "be", "is", "with", "_q_", "_n_"]);

function distance(a: string[], b: string[]): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] ?? 0;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] ?? 0;
      prev[j] = Math.min(up + 1, (prev[j - 1] ?? 0) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] ?? 0;
}

/** The phrase sharing the most meaningful words with the line; ties go to the fewest word edits. */
export function nearestPhrase(text: string): string {
  const w = words(text);
  const meaningful = new Set(w.filter((x) => !FILLER.has(x)));
  let best = PHRASES[0]?.example ?? "";
  let bestScore = Number.NEGATIVE_INFINITY;
  for (const p of PHRASES) {
    const pw = words(p.example);
    const shared = new Set(pw.filter((x) => meaningful.has(x))).size;
    const score = shared * 10 - distance(w, pw);
    if (score > bestScore) {
      bestScore = score;
      best = p.example;
    }
  }
  return best;
}
