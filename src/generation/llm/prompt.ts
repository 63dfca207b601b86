// The prompt for the llm generator: the feature, its criteria, the relevant OpenAPI fragment or page outline,
// and the JSON Schema the answer must satisfy.
import { z } from "zod";
import { DraftSchema } from "../draft-check";
import type { GenerationInput } from "../types";

export const AnswerSchema = z.strictObject({ automations: z.array(DraftSchema).min(1).max(50) });
const ANSWER_JSON_SCHEMA = JSON.stringify(z.toJSONSchema(AnswerSchema, { io: "input", unrepresentable: "any" }));
/** The most characters of OpenAPI operations or page outline a prompt carries. */
export const MAX_CONTEXT_CHARS = 30_000;

const SYSTEM = `You write automated tests for the product feature described by the user, as svc automations.
Answer with ONE JSON object and nothing else. It must satisfy this JSON Schema:
${ANSWER_JSON_SCHEMA}

Rules:
- kind "http": every step is {"name", "request": {"method", "url", "headers"?, "query"?, "json"?}, "expect": [...], "capture"?}.
  Assertions: {"status": 200}, {"json": "$.id", "equals": 1}, {"header": "content-type", "contains": "json"}, {"body": {"contains": "ok"}}, {"schema": {…JSON Schema…}}.
- kind "browser": steps like {"goto": "/login"}, {"fill": {"locator": "label=Email", "value": "a@b.c"}}, {"click": "role=button[name=\\"Sign in\\"]"},
  {"expect": {"text": "Welcome"}}, {"expect": {"url": "/dashboard"}}, {"expect": {"title": "…"}}.
  Locators: css=…, text=…, label=…, placeholder=…, button=…, role=NAME[name="…"], testid=….
- URLs are relative (resolved against the environment's BASE_URL). Secrets are written as {{VARIABLE}}.
- One automation per behaviour worth checking; names say what is checked.`;

export interface PromptContext {
  /** The OpenAPI operations the feature covers, or the outline of its page, as JSON text. */
  fragment: string | null;
  fragmentKind: "openapi" | "page" | null;
}

export function buildMessages(input: GenerationInput, ctx: PromptContext): { role: "system" | "user"; content: string }[] {
  const f = input.feature;
  const parts = [
    `Feature: ${f.name}`,
    f.description ? `Description:\n${f.description}` : "",
    f.acceptance_criteria ? `Acceptance criteria:\n${f.acceptance_criteria}` : "",
    f.target ? `Target: ${JSON.stringify(f.target)}` : "",
    ctx.fragment
      ? `${ctx.fragmentKind === "openapi" ? "The OpenAPI operations it covers" : "The outline of its page"}:\n${ctx.fragment.slice(0, MAX_CONTEXT_CHARS)}`
      : "",
  ].filter((p) => p !== "");
  return [
    { role: "system", content: SYSTEM },
    { role: "user", content: parts.join("\n\n") },
  ];
}
