// A small scripted OpenAI-compatible model: a real HTTP server answering `POST /v1/chat/completions` with the
// next scripted message (text, or tool_calls), recording every request it was sent. Asked with `stream: true`, it
// answers as the protocol streams: server-sent chunks (`choices[0].delta.content`, `delta.tool_calls` pieces by
// index, then `[DONE]`), `chunkDelayMs` apart, optionally pausing after some chunks until `release()`. Asked
// without it, it answers in one JSON body after as long as the stream would have taken: a model writes its answer
// in the same time either way.
export interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown>;
}
interface Streaming {
  /** Into how many chunks a streamed text (or each call's arguments) is cut; default: one per word. */
  chunks?: number;
  /** When streamed: after this many chunks, wait for `release()` before sending the rest. */
  pauseAfter?: number;
}
export type ScriptedTurn = ({ text: string } | { tools: ScriptedCall[] }) & Streaming;

export interface ScriptedModel {
  /** The base_url to configure: `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Queues the turns the next requests are answered with, in order. */
  script(...turns: ScriptedTurn[]): void;
  /** Every request body received. */
  requests: {
    model: string;
    stream?: boolean;
    messages: { role: string; content?: string | null }[];
    tools?: { function: { name: string } }[];
  }[];
  /** Streamed answers: begun, sent to their end, and given up because the client went away. */
  streams: { begun: number; finished: number; aborted: number };
  /** Lets a paused stream (`pauseAfter`) go on. */
  release(): void;
  stop(): Promise<void>;
}

/** `text` cut into `n` pieces (one per word when n is absent), which put together are the text again. */
function pieces(text: string, n?: number): string[] {
  if (n === undefined) return text.match(/\S+\s*|\s+/g) ?? [text];
  const size = Math.max(1, Math.ceil(text.length / n));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [""];
}

export function startScriptedModel(opts: { chunkDelayMs?: number } = {}): ScriptedModel {
  const chunkDelayMs = opts.chunkDelayMs ?? 10;
  const queue: ScriptedTurn[] = [];
  const requests: ScriptedModel["requests"] = [];
  const streams = { begun: 0, finished: 0, aborted: 0 };
  let releases: (() => void)[] = [];
  let released = 0;
  let n = 0;

  const toolCalls = (turn: { tools: ScriptedCall[] }) =>
    turn.tools.map((t) => ({ id: `call_${++n}`, type: "function", function: { name: t.name, arguments: JSON.stringify(t.arguments) } }));

  /** How many chunks a turn streams in: the role, its pieces, the finish. */
  const chunkCount = (turn: ScriptedTurn) =>
    2 +
    ("text" in turn
      ? pieces(turn.text, turn.chunks).length
      : turn.tools.reduce((k, t) => k + 1 + pieces(JSON.stringify(t.arguments), turn.chunks ?? 3).length, 0));

  /** The chunks' data lines of one streamed turn. */
  function chunksOf(turn: ScriptedTurn, id: string): unknown[] {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const out: unknown[] = [chunk({ role: "assistant", content: "" })];
    if ("text" in turn) {
      for (const p of pieces(turn.text, turn.chunks)) out.push(chunk({ content: p }));
      out.push(chunk({}, "stop"));
    } else {
      toolCalls(turn).forEach((c, index) => {
        out.push(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.function.name, arguments: "" } }] }));
        for (const p of pieces(c.function.arguments, turn.chunks ?? 3)) out.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
      });
      out.push(chunk({}, "tool_calls"));
    }
    return out;
  }

  function streamed(turn: ScriptedTurn, signal: AbortSignal): Response {
    const id = `chatcmpl-${++n}`;
    const chunks = chunksOf(turn, id);
    const encoder = new TextEncoder();
    let gone = false;
    streams.begun++;
    const giveUp = () => {
      if (gone) return;
      gone = true;
      streams.aborted++;
    };
    signal.addEventListener("abort", giveUp);
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        // Chunk i is due chunkDelayMs × i after the first (a pause moves the rest on): the same pace as a whole answer.
        let due = performance.now();
        try {
          for (let i = 0; i < chunks.length; i++) {
            if (i > 0 && chunkDelayMs > 0) {
              due += chunkDelayMs;
              await Bun.sleep(Math.max(0, due - performance.now()));
            }
            if (turn.pauseAfter !== undefined && i === turn.pauseAfter + 1) {
              // +1: the first chunk only names the role; pauseAfter counts the chunks that carry the answer.
              if (released > 0) released--;
              else await new Promise<void>((resolve) => releases.push(resolve));
              due = performance.now();
            }
            if (gone) return;
            controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunks[i])}\n\n`));
          }
          controller.enqueue(encoder.encode("data: [DONE]\n\n"));
          streams.finished++;
          controller.close();
        } catch {
          giveUp();
        }
      },
      cancel: giveUp,
    });
    return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || path !== "/v1/chat/completions") return Response.json({ error: { message: "not found" } }, { status: 404 });
      const request = (await req.json()) as ScriptedModel["requests"][number];
      requests.push(request);
      const turn = queue.shift() ?? { text: "(the script has ended)" };
      if (request.stream === true) return streamed(turn, req.signal);
      const writing = (chunkCount(turn) - 1) * chunkDelayMs;
      if (writing > 0) await Bun.sleep(writing);
      const message = "text" in turn ? { role: "assistant", content: turn.text } : { role: "assistant", content: null, tool_calls: toolCalls(turn) };
      return Response.json({
        id: `chatcmpl-${n}`,
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason: "text" in turn ? "stop" : "tool_calls" }],
      });
    },
  });
  return {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    script: (...turns) => queue.push(...turns),
    requests,
    streams,
    release: () => {
      const waiting = releases;
      releases = [];
      if (waiting.length === 0) released++;
      for (const r of waiting) r();
    },
    stop: () => server.stop(true),
  };
}
