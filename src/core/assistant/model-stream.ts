// One chat-completions request with `stream: true`: the answer as server-sent chunks, each piece of text
// (`choices[0].delta.content`) handed on as it arrives, and the pieces of tool calls (`delta.tool_calls`)
// assembled by their index into whole calls. An endpoint that answers with one JSON body instead is read as such.
import { excerpt, type Provider } from "../../generation/llm/provider";
import { GenerationFailure } from "../../generation/types";

export interface StreamedToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface StreamedMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: StreamedToolCall[];
}

interface ToolCallPiece {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}
interface Chunk {
  choices?: { delta?: { content?: string | null; tool_calls?: ToolCallPiece[] }; message?: { content?: string | null; tool_calls?: StreamedToolCall[] } }[];
  error?: { message?: string };
}

/**
 * Streams one model turn: `onText` gets each piece of the answer's text as it arrives. At most `maxChars` of text
 * and tool arguments are read (the turn's tokens, whatever the endpoint does with max_tokens); a longer answer is
 * cut there. Never longer than the provider's timeout; `signal` (the caller gone, the answer's deadline) stops the
 * request at once.
 */
export async function streamedCompletion(
  provider: Provider,
  request: Record<string, unknown>,
  signal: AbortSignal,
  onText: (text: string) => void,
  maxChars: number,
): Promise<StreamedMessage> {
  const url = `${provider.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  const timeout = AbortSignal.timeout(provider.timeoutMs);
  const failed = (e: unknown): never => {
    signal.throwIfAborted();
    if (timeout.aborted) throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} did not answer within ${provider.timeoutMs} ms`);
    if (e instanceof GenerationFailure) throw e;
    throw new GenerationFailure(`could not reach the LLM provider at ${provider.baseUrl}: ${(e as Error).message}`);
  };
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      signal: AbortSignal.any([signal, timeout]),
      headers: {
        "content-type": "application/json",
        accept: "text/event-stream",
        ...(provider.apiKey ? { authorization: `Bearer ${provider.apiKey}` } : {}),
      },
      body: JSON.stringify({ model: provider.model, ...request, stream: true }),
    });
  } catch (e) {
    return failed(e);
  }
  if (!res.ok || !(res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      return failed(e);
    }
    if (!res.ok) throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} answered HTTP ${res.status}: ${excerpt(text)}`);
    return wholeAnswer(provider, text, onText);
  }

  let content = "";
  let chars = 0;
  const calls: StreamedToolCall[] = [];
  const take = (piece: string): string => {
    const room = Math.max(0, maxChars - chars);
    chars += Math.min(piece.length, room);
    return piece.slice(0, room);
  };
  /** Applies one chunk; false once the answer is complete ([DONE]) or has reached its bound. */
  const apply = (data: string): boolean => {
    if (data === "[DONE]") return false;
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} streamed a chunk that is not JSON: ${excerpt(data)}`);
    }
    if (chunk.error) throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} failed while answering: ${excerpt(chunk.error.message ?? data)}`);
    const delta = chunk.choices?.[0]?.delta;
    if (typeof delta?.content === "string" && delta.content !== "") {
      const text = take(delta.content);
      if (text) {
        content += text;
        onText(text);
      }
    }
    for (const piece of delta?.tool_calls ?? []) {
      const i = piece.index ?? calls.length - 1;
      if (i < 0 || i > 127) continue;
      calls[i] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
      const call = calls[i];
      if (piece.id) call.id = piece.id;
      if (piece.function?.name) call.function.name += take(piece.function.name);
      if (piece.function?.arguments) call.function.arguments += take(piece.function.arguments);
    }
    return chars < maxChars;
  };

  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  try {
    reading: for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf("\n");
        if (line === "") {
          // The end of one event: its data lines together are one chunk.
          const event = data.join("\n");
          data = [];
          if (event !== "" && !apply(event)) break reading;
        } else if (line.startsWith("data:")) {
          data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
        }
      }
      if (done) {
        if (data.length > 0) apply(data.join("\n"));
        break;
      }
    }
  } catch (e) {
    return failed(e);
  } finally {
    // Done with it (also when cut off at the bound): the connection to the model is let go.
    reader.cancel().catch(() => {});
  }
  const toolCalls = calls.filter((c): c is StreamedToolCall => c !== undefined && c.function.name !== "").map((c, i) => ({ ...c, id: c.id || `call_${i}` }));
  return { role: "assistant", content: content === "" && toolCalls.length > 0 ? null : content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
}

/** An endpoint that ignored `stream: true`: its one JSON answer, its text handed on at once. */
function wholeAnswer(provider: Provider, text: string, onText: (text: string) => void): StreamedMessage {
  let body: Chunk;
  try {
    body = JSON.parse(text) as Chunk;
  } catch {
    throw new GenerationFailure(`the LLM provider at ${provider.baseUrl} answered with something that is not JSON: ${excerpt(text)}`);
  }
  const message = body.choices?.[0]?.message;
  if (!message) throw new GenerationFailure(`the model at ${provider.baseUrl} answered without choices[0].message`);
  const content = typeof message.content === "string" ? message.content : null;
  if (content) onText(content);
  return { role: "assistant", content, ...(message.tool_calls && message.tool_calls.length > 0 ? { tool_calls: message.tool_calls } : {}) };
}
