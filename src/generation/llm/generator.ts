// The llm generator: asks the configured OpenAI-compatible model for automations as JSON, validates the answer
// against the automation schema, sends invalid output back once with the errors, then rejects it with a warning.
import type { GeneratedDraft, GenerationWarningRecord } from "../../core/generations/queue";
import { crawl } from "../crawl/fetch-pages";
import { checkDraft, describeProblems, type DraftProblem } from "../draft-check";
import { coveredOperations, listOperations, readDocument } from "../openapi/operations";
import { GenerationFailure, type GenerationInput, type Generator } from "../types";
import { buildMessages, MAX_CONTEXT_CHARS, type PromptContext } from "./prompt";
import { type ChatMessage, chat, type Provider } from "./provider";

function providerOf(input: GenerationInput): Provider | string {
  const llm = input.config.llm;
  if (!llm.base_url || !llm.model) return "no LLM is configured (set [generation.llm] base_url and model)";
  let apiKey: string | null = null;
  if (llm.api_key_env) {
    apiKey = process.env[llm.api_key_env] ?? null;
    if (!apiKey) return `the LLM's API key variable ${llm.api_key_env} is not set in the server's environment`;
  }
  return { baseUrl: llm.base_url, model: llm.model, apiKey, timeoutMs: llm.timeout_ms };
}

async function contextOf(input: GenerationInput, signal: AbortSignal, warnings: GenerationWarningRecord[]): Promise<PromptContext> {
  const t = input.feature.target;
  if (t?.kind === "api" && input.openapi) {
    const ops = coveredOperations(listOperations(await readDocument(input.openapi)), t).map((o) => ({
      operation: o.id,
      method: o.method,
      path: o.path,
      parameters: o.parameters,
      request_body: o.body,
      statuses: o.statuses,
      responses: Object.fromEntries(o.responseSchemas),
      security: o.security,
    }));
    // Whole operations, as many as the prompt holds: one cut in the middle is JSON the model cannot read.
    const kept: string[] = [];
    let size = 2;
    for (const o of ops) {
      const text = JSON.stringify(o);
      if (size + text.length + 1 > MAX_CONTEXT_CHARS) break;
      kept.push(text);
      size += text.length + 1;
    }
    if (kept.length < ops.length)
      warnings.push({
        generator: "llm",
        message: `The prompt carries ${kept.length} of the ${ops.length} OpenAPI operations the feature covers (at most ${MAX_CONTEXT_CHARS} characters of them): narrow the feature's target (tags, paths) for the others`,
      });
    return { fragment: `[${kept.join(",")}]`, fragmentKind: "openapi" };
  }
  if (t?.kind === "web" && /^https?:\/\//i.test(t.url)) {
    try {
      const { pages } = await crawl(t.url, 1, signal, async () => undefined);
      const p = pages[0];
      if (p)
        return {
          fragment: JSON.stringify({ url: p.url, title: p.title, headings: p.headings, links: p.links.slice(0, 50), forms: p.forms }),
          fragmentKind: "page",
        };
    } catch (e) {
      signal.throwIfAborted();
      warnings.push({ generator: "llm", message: `The prompt has no page outline: ${(e as Error).message}` });
    }
  }
  return { fragment: null, fragmentKind: null };
}

/** The drafts of an answer, or what is wrong with it (as the model will be told). */
function readAnswer(content: string): { drafts: GeneratedDraft[] } | { problems: DraftProblem[] } {
  const text = content
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    return { problems: [{ path: "", message: `the answer is not JSON (${(e as Error).message})` }] };
  }
  // `null` is JSON too: read it as the answer without automations it is, to be sent back like any other.
  const list = (data as { automations?: unknown } | null)?.automations;
  if (!Array.isArray(list) || list.length === 0) return { problems: [{ path: "automations", message: "expected a non-empty array of automations" }] };
  const drafts: GeneratedDraft[] = [];
  const problems: DraftProblem[] = [];
  list.forEach((candidate, i) => {
    const checked = checkDraft(candidate);
    if ("draft" in checked) drafts.push({ ...checked.draft, tags: [...new Set(["generated", "llm", ...checked.draft.tags])].slice(0, 50) });
    else problems.push(...checked.problems.map((p) => ({ path: `automations.${i}${p.path ? `.${p.path}` : ""}`, message: p.message })));
  });
  return problems.length > 0 ? { problems } : { drafts };
}

export const llmGenerator: Generator = {
  name: "llm",
  missingInput(input) {
    const p = providerOf(input);
    return typeof p === "string" ? p : null;
  },
  async generate(input, run) {
    const provider = providerOf(input);
    if (typeof provider === "string") throw new GenerationFailure(provider);
    const warnings: GenerationWarningRecord[] = [];
    await run.progress(0, 2);
    const messages: ChatMessage[] = buildMessages(input, await contextOf(input, run.signal, warnings));
    const first = await chat(provider, messages, run.signal);
    const firstRead = readAnswer(first);
    await run.progress(1, 2);
    if ("drafts" in firstRead) return { automations: firstRead.drafts, warnings };
    messages.push(
      { role: "assistant", content: first },
      {
        role: "user",
        content: `Your answer does not satisfy the schema: ${describeProblems(firstRead.problems, 20)}. Answer again with the corrected JSON object only.`,
      },
    );
    const second = await chat(provider, messages, run.signal);
    const secondRead = readAnswer(second);
    await run.progress(2, 2);
    if ("drafts" in secondRead) {
      warnings.push({
        generator: "llm",
        message: `The model's first answer was invalid (${describeProblems(firstRead.problems)}); its corrected answer was used`,
      });
      return { automations: secondRead.drafts, warnings };
    }
    warnings.push({
      generator: "llm",
      message: `The model's answer was rejected: still invalid after one repair round (${describeProblems(secondRead.problems)})`,
    });
    return { automations: [], warnings };
  },
};
