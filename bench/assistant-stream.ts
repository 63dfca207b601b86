// Time to the first words of an assistant reply: the JSON answer of send_assistant_message beside the same call
// read as an event stream (Accept: text/event-stream), in one in-process `svc serve` against the scripted
// OpenAI-compatible model answering with CHUNKS chunks DELAY ms apart. For each: time to the first byte of the
// answer, to the first `delta` (the stream only) and to the whole answer (medians over ROUNDS asks of each).
// Usage: bun bench/assistant-stream.ts [--chunks 20] [--delay 50] [--rounds 5] [--smoke]   (--smoke: 5 chunks 10 ms apart, 1 round)
import { flag, has } from "./args";
import { startScriptedModel } from "../test/helpers/scripted-model";
import { startTestServer } from "../test/helpers/server";

const smoke = has("smoke");
const CHUNKS = flag("chunks", smoke ? 5 : 20);
const DELAY = flag("delay", smoke ? 10 : 50);
const ROUNDS = flag("rounds", smoke ? 1 : 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const ms = (x: number) => `${x.toFixed(1)} ms`;

const model = startScriptedModel({ chunkDelayMs: DELAY });
const s = await startTestServer({ rate_limit: { enabled: false } }, { SVC_ASSISTANT_BASE_URL: model.baseUrl, SVC_ASSISTANT_MODEL: "scripted" });
const text = Array.from({ length: CHUNKS }, (_, i) => `word${i + 1}`).join(" ");

/** One ask: times from sending to the first byte, the first delta (streams only) and the whole answer. */
async function ask(stream: boolean): Promise<{ firstByte: number; firstDelta: number; whole: number }> {
  model.script({ text, chunks: CHUNKS });
  const t0 = performance.now();
  const res = await fetch(`${s.api}/assistant/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json", ...(stream ? { accept: "text/event-stream" } : {}) },
    body: JSON.stringify({ text: "hello" }),
  });
  if (res.status !== 200) throw new Error(`send_assistant_message answered ${res.status}: ${await res.text()}`);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let firstByte = Number.NaN;
  let firstDelta = Number.NaN;
  let seen = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const at = performance.now() - t0;
    if (Number.isNaN(firstByte)) firstByte = at;
    seen += decoder.decode(value, { stream: true });
    if (stream && Number.isNaN(firstDelta) && seen.includes("event: delta\n")) firstDelta = at;
  }
  const whole = performance.now() - t0;
  const reply = stream ? (JSON.parse(seen.slice(seen.indexOf("event: done\ndata: ") + 18).trim()) as { reply: string }).reply : JSON.parse(seen).reply;
  if (reply !== text) throw new Error(`the reply came back as ${JSON.stringify(reply)}`);
  return { firstByte, firstDelta, whole };
}

try {
  const json: Awaited<ReturnType<typeof ask>>[] = [];
  const streamed: Awaited<ReturnType<typeof ask>>[] = [];
  // Warm-up: the first ask builds the tools the model is offered.
  await ask(false);
  await ask(true);
  for (let i = 0; i < ROUNDS; i++) {
    json.push(await ask(false));
    streamed.push(await ask(true));
  }
  const col = (xs: Awaited<ReturnType<typeof ask>>[], k: "firstByte" | "firstDelta" | "whole") => ms(median(xs.map((x) => x[k])));
  console.log(`assistant reply, scripted model: ${CHUNKS} chunks ${DELAY} ms apart; medians of ${ROUNDS} asks each`);
  console.log("                      JSON (before)   stream (after)");
  console.log(`first byte            ${col(json, "firstByte").padEnd(16)}${col(streamed, "firstByte")}`);
  console.log(`first words (delta)   ${col(json, "whole").padEnd(16)}${col(streamed, "firstDelta")}`);
  console.log(`whole reply           ${col(json, "whole").padEnd(16)}${col(streamed, "whole")}`);
} finally {
  await s.stop();
  await model.stop();
}
