// A small scripted OpenAI-compatible model: a real HTTP server answering `POST /v1/chat/completions` with the
// next scripted message (text, or tool_calls), recording every request it was sent.
export interface ScriptedCall {
  name: string;
  arguments: Record<string, unknown>;
}
export type ScriptedTurn = { text: string } | { tools: ScriptedCall[] };

export interface ScriptedModel {
  /** The base_url to configure: `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** Queues the turns the next requests are answered with, in order. */
  script(...turns: ScriptedTurn[]): void;
  /** Every request body received. */
  requests: { model: string; messages: { role: string; content?: string | null }[]; tools?: { function: { name: string } }[] }[];
  stop(): Promise<void>;
}

export function startScriptedModel(): ScriptedModel {
  const queue: ScriptedTurn[] = [];
  const requests: ScriptedModel["requests"] = [];
  let n = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method !== "POST" || path !== "/v1/chat/completions") return Response.json({ error: { message: "not found" } }, { status: 404 });
      requests.push((await req.json()) as ScriptedModel["requests"][number]);
      const turn = queue.shift() ?? { text: "(the script has ended)" };
      const message =
        "text" in turn
          ? { role: "assistant", content: turn.text }
          : {
              role: "assistant",
              content: null,
              tool_calls: turn.tools.map((t) => ({ id: `call_${++n}`, type: "function", function: { name: t.name, arguments: JSON.stringify(t.arguments) } })),
            };
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
    stop: () => server.stop(true),
  };
}
