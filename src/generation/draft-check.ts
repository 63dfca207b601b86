// Validates a generated automation with the manifest's own schemas before it is stored.
import { z } from "zod";
import { AutomationKind, Step, stepKindProblems } from "../manifest/automation-format";
import { plainName } from "../manifest/define";
import type { GeneratedDraft } from "../core/generations/queue";

export const DraftSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(10_000).default(""),
  kind: AutomationKind,
  steps: z.array(Step).min(1).max(500),
  tags: z.array(z.string().trim().min(1).max(100)).max(50).default([]),
});

export type DraftProblem = { path: string; message: string };

/** The draft as the schemas parse it, or the problems found (path: message). */
export function checkDraft(candidate: unknown): { draft: GeneratedDraft } | { problems: DraftProblem[] } {
  const parsed = DraftSchema.safeParse(candidate);
  if (!parsed.success) {
    return { problems: parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })) };
  }
  const problems = stepKindProblems(parsed.data.kind, parsed.data.steps);
  if (problems.length > 0) return { problems };
  // Names come from documents and pages (an operationId, a page title): made names the API would accept.
  const name = plainName(parsed.data.name);
  if (name === "") return { problems: [{ path: "name", message: "nothing is left of the name without its control characters" }] };
  const tags = [...new Set(parsed.data.tags.map(plainName).filter((t) => t !== ""))];
  return { draft: { ...parsed.data, name, tags } };
}

export function describeProblems(problems: DraftProblem[], max = 5): string {
  const shown = problems.slice(0, max).map((p) => (p.path ? `${p.path}: ${p.message}` : p.message));
  return shown.join("; ") + (problems.length > max ? `; and ${problems.length - max} more` : "");
}
