// A client of an OpenAI-compatible chat-completions endpoint; its timeouts and HTTP errors fail the job clearly.
import { GenerationFailure } from "../types";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface Provider {
  baseUrl: string;
  model: string;
  apiKey: string | null;
  timeoutMs: number;
}

export function excerpt(text: string, max = 300): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/**
 * One chat-completions request (`POST {base_url}/chat/completions`): the parsed JSON answer. Never hangs longer
 * than the configured timeout; failures are a GenerationFailure naming the provider.
 */
export async function completion(provider: Provider, request: Record<string, unknown>, signal: AbortSignal): Promise<unknown> {
  const url = `${provider.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const timeout = AbortSignal.timeout(provider.timeoutMs);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: "POST",
      signal: AbortSignal.any([signal, timeout]),
      headers: { "content-type": "application/json", ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}) },
      body: JSON.stringify({ model: provider.model, ...request }),
    });
    text = await res.text();
  } catch (e) {
    signal.throwIfAborted();
    if (timeout.aborted) throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} did not answer within ${provider.timeoutMs} ms`);
    throw new GenerationFailure(`could not reach the LLM provider at ${provider.baseUrl}: ${(e as Error).message}`);
  }
  if (!res.ok) throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} answered HTTP ${res.status}: ${excerpt(text)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} answered with something that is not JSON: ${excerpt(text)}`);
  }
}

/** The text of the first choice; never hangs longer than the configured timeout. */
export async function chat(provider: Provider, messages: ChatMessage[], signal: AbortSignal): Promise<string> {
  const body = await completion(provider, { messages, temperature: 0.2, response_format: { type: "json_object" } }, signal);
  const content = (body as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  if (typeof content !== "string") {
    throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} answered without choices[0].message.content: ${excerpt(JSON.stringify(body))}`);
  }
  return content;
}
