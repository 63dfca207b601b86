// The in-app assistant against a scripted OpenAI-compatible model (a real HTTP server): read-only tools run at
// once, writes are held until confirmed (runs started so carry trigger "assistant"), what the person may not do
// is refused at once (confirming it answers 403), conversations are their owner's alone, and without a model the
// operation answers 409 saying how to configure one.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { json } from "./helpers/runs";
import { startScriptedModel, type ScriptedModel } from "./helpers/scripted-model";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

setDefaultTimeout(60_000);

let model: ScriptedModel;
let s: TestServer;
let target: ReturnType<typeof Bun.serve>;
let member: { key: string };

interface Action {
  id: string;
  tool: string;
  status: string;
  result?: Record<string, unknown>;
}
interface Reply {
  conversation_id: string;
  reply: string;
  actions: Action[];
}

beforeAll(async () => {
  model = startScriptedModel();
  target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ ok: true }) });
  s = await startTestServer({ rate_limit: { enabled: false } }, { SVC_ASSISTANT_BASE_URL: model.baseUrl, SVC_ASSISTANT_MODEL: "scripted" });
  member = await s.userWithKey("member@acme.test", "acme", "member");
  await json(await s.call("POST", "/projects", { name: "Shop" }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "local", variables: { BASE_URL: `http://127.0.0.1:${target.port}` } }), 201);
  await json(
    await s.call("POST", "/projects/shop/automations", {
      name: "health",
      kind: "http",
      environment: "local",
      steps: [{ request: { url: "/health" }, expect: [{ status: 200 }] }],
    }),
    201,
  );
});
afterAll(async () => {
  await s.stop();
  await model.stop();
  await target.stop(true);
});

const ask = async (text: string, key = s.key, conversation_id?: string) =>
  json<Reply>(await s.call("POST", "/assistant/messages", { text, ...(conversation_id ? { conversation_id } : {}) }, key));

test("a read-only tool runs at once (done) and the model reads its result; the model is offered the MCP tools", async () => {
  model.script({ tools: [{ name: "list_projects", arguments: {} }] }, { text: "You have one project: Shop." });
  const r = await ask("Which projects do I have?");
  expect(r.reply).toBe("You have one project: Shop.");
  expect(r.actions).toHaveLength(1);
  expect(r.actions[0]?.tool).toBe("list_projects");
  expect(r.actions[0]?.status).toBe("done");
  const second = model.requests.at(-1);
  expect(second?.messages.some((m) => m.role === "tool" && (m.content ?? "").includes("shop"))).toBe(true);
  const offered = (model.requests.at(-2)?.tools ?? []).map((t) => t.function.name);
  expect(offered).toContain("run_automation");
  expect(offered).toContain("wait_for_run");
  expect(offered).not.toContain("add_member");
  expect(offered).not.toContain("send_assistant_message");
});

test("a record's result reaches the model once: its JSON is not told twice", async () => {
  model.script({ tools: [{ name: "get_project", arguments: { project: "shop" } }] }, { text: "Shop it is." });
  const r = await ask("Tell me about the shop project");
  expect(r.actions[0]?.status).toBe("done");
  const told = (model.requests.at(-1)?.messages ?? []).filter((m) => m.role === "tool").at(-1)?.content ?? "";
  expect(told).toContain('"slug":"shop"');
  expect(told.split('"slug":"shop"')).toHaveLength(2);
});

test("a write is held as needs_confirmation, runs only when confirmed, and its run has trigger assistant", async () => {
  model.script({ tools: [{ name: "run_automation", arguments: { project: "shop", automation: "health" } }] }, { text: "Confirm the run, please." });
  const r = await ask("Run the health check");
  const held = r.actions[0] as Action;
  expect(held.status).toBe("needs_confirmation");
  const before = await json<{ data: unknown[] }>(await s.call("GET", "/projects/shop/runs"));
  expect(before.data).toHaveLength(0);

  const done = await json<Action>(await s.call("POST", `/assistant/actions/${held.id}/confirm`));
  expect(done.status).toBe("done");
  const runs = await json<{ data: { id: string; trigger: string }[] }>(await s.call("GET", "/projects/shop/runs"));
  expect(runs.data).toHaveLength(1);
  expect(runs.data[0]?.trigger).toBe("assistant");
  // Once run, it cannot run again.
  const again = await s.call("POST", `/assistant/actions/${held.id}/confirm`);
  expect(again.status).toBe(409);
});

test("a member's assistant is refused an admin action at once; confirming it answers 403 and nothing changes", async () => {
  model.script({ tools: [{ name: "delete_project", arguments: { project: "shop" } }] }, { text: "I may not delete it." });
  const r = await ask("Delete the shop project", member.key);
  const refused = r.actions[0] as Action;
  expect(refused.status).toBe("refused");
  expect(String(refused.result?.message)).toContain("only owners and admins");
  const confirm = await s.call("POST", `/assistant/actions/${refused.id}/confirm`, undefined, member.key);
  expect(confirm.status).toBe(403);
  expect(((await confirm.json()) as { error: string }).error).toBe("forbidden");
  expect((await s.call("GET", "/projects/shop")).status).toBe(200);
});

test("conversations are their owner's alone: listed, read, continued and confirmed by nobody else", async () => {
  model.script({ tools: [{ name: "create_feature", arguments: { project: "shop", name: "Checkout" } }] }, { text: "Held." });
  const mine = await ask("Add a Checkout feature");
  const list = await json<{ data: { id: string }[] }>(await s.call("GET", "/assistant/conversations"));
  expect(list.data.map((c) => c.id)).toContain(mine.conversation_id);
  const read = await json<{ messages: { role: string; text: string }[]; actions: Action[] }>(
    await s.call("GET", `/assistant/conversations/${mine.conversation_id}`),
  );
  expect(read.messages[0]).toEqual({ role: "user", text: "Add a Checkout feature" });
  expect(read.actions.map((a) => a.id)).toContain(mine.actions[0]?.id as string);

  const theirs = await json<{ data: { id: string }[] }>(await s.call("GET", "/assistant/conversations", undefined, member.key));
  expect(theirs.data.map((c) => c.id)).not.toContain(mine.conversation_id);
  expect((await s.call("GET", `/assistant/conversations/${mine.conversation_id}`, undefined, member.key)).status).toBe(404);
  expect((await s.call("POST", "/assistant/messages", { text: "hi", conversation_id: mine.conversation_id }, member.key)).status).toBe(404);
  expect((await s.call("POST", `/assistant/actions/${mine.actions[0]?.id}/confirm`, undefined, member.key)).status).toBe(404);
  const features = await json<{ data: unknown[] }>(await s.call("GET", "/projects/shop/features"));
  expect(features.data).toHaveLength(0);
});

test("without a configured model: 409 conflict saying how to configure one, and nothing is stored", async () => {
  const bare = await startTestServer();
  try {
    const res = await bare.call("POST", "/assistant/messages", { text: "hello" });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: string; message: string };
    expect(body.error).toBe("conflict");
    expect(body.message).toContain("[assistant] base_url and model");
    expect(body.message).toContain("SVC_ASSISTANT_BASE_URL");
    const list = await json<{ data: unknown[] }>(await bare.call("GET", "/assistant/conversations"));
    expect(list.data).toHaveLength(0);
  } finally {
    await bare.stop();
  }
});

/** The events of a server-sent event stream, one at a time. */
function eventReader(res: Response) {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    /** The next event, or null at the end of the stream; comment lines (keep-alives) are skipped. */
    async next(): Promise<{ event: string; data: Record<string, unknown> } | null> {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split("\n").filter((l) => !l.startsWith(":"));
          if (lines.length === 0) continue;
          const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "message";
          const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
          return { event, data: JSON.parse(data.join("\n")) as Record<string, unknown> };
        }
        const { done, value } = await reader.read();
        if (done) return null;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

const askStreamed = (text: string, extra: Record<string, unknown> = {}, signal?: AbortSignal, server = s) =>
  fetch(`${server.api}/assistant/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ text, ...extra }),
    signal,
  });

test("streamed (Accept: text/event-stream): conversation, the action, the words as they arrive (before the model has finished), then done with the JSON answer", async () => {
  model.script({ tools: [{ name: "get_project", arguments: { project: "shop" } }], chunks: 4 }, { text: "Shop has no runs yet, all is quiet.", pauseAfter: 1 });
  const res = await askStreamed("How is the shop project?");
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("text/event-stream");
  expect(res.headers.get("cache-control")).toContain("no-cache");
  const events = eventReader(res);
  const seen: { event: string; data: Record<string, unknown> }[] = [];
  let e = await events.next();
  while (e && e.event !== "delta") {
    seen.push(e);
    e = await events.next();
  }
  // The first words arrived while the model still holds the rest of its answer back.
  expect(e?.data).toEqual({ text: "Shop " });
  expect(model.streams.finished).toBeLessThan(model.streams.begun);
  model.release();
  const deltas = [e?.data.text];
  for (e = await events.next(); e; e = await events.next()) {
    seen.push(e);
    if (e.event === "delta") deltas.push(e.data.text);
  }
  expect(seen.map((x) => x.event)).toEqual(["conversation", "action", ...deltas.slice(1).map(() => "delta"), "done"]);
  const conversationId = seen[0]?.data.conversation_id as string;
  expect(conversationId).toStartWith("asst_");
  // The tool call came in pieces (its arguments cut in four) and was put together.
  const action = seen[1]?.data as unknown as Action & { arguments: unknown };
  expect(action.tool).toBe("get_project");
  expect(action.arguments).toEqual({ project: "shop" });
  expect(action.status).toBe("done");
  expect(deltas.join("")).toBe("Shop has no runs yet, all is quiet.");
  const done = seen.at(-1)?.data as unknown as Reply;
  expect(done).toEqual({ conversation_id: conversationId, reply: "Shop has no runs yet, all is quiet.", actions: [seen[1]?.data as unknown as Action] });
  // Each model turn was asked for as a stream.
  expect(model.requests.slice(-2).map((r) => r.stream)).toEqual([true, true]);
  const stored = await json<{ messages: { role: string; text: string }[] }>(await s.call("GET", `/assistant/conversations/${conversationId}`));
  expect(stored.messages).toEqual([
    { role: "user", text: "How is the shop project?" },
    { role: "assistant", text: "Shop has no runs yet, all is quiet." },
  ]);
});

test("without Accept: text/event-stream the answer is the JSON one, and the model is not asked to stream", async () => {
  model.script({ text: "Plain." });
  const res = await s.call("POST", "/assistant/messages", { text: "hello" });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(res.headers.get("cache-control")).toBe("no-store");
  const body = (await res.json()) as Reply;
  expect(Object.keys(body)).toEqual(["conversation_id", "reply", "actions"]);
  expect(body.reply).toBe("Plain.");
  expect(model.requests.at(-1)?.stream).toBeUndefined();
});

test("asked for a stream, a refusal before it began is an ordinary JSON error with its status", async () => {
  const missing = await askStreamed("hi", { conversation_id: "asst_nope" });
  expect(missing.status).toBe(404);
  expect(missing.headers.get("content-type")).toStartWith("application/json");
  expect(((await missing.json()) as { error: string }).error).toBe("not_found");
  const bad = await askStreamed("   ");
  expect(bad.status).toBe(400);
  const body = (await bad.json()) as { error: string; details: { path: string }[] };
  expect(body.error).toBe("invalid_request");
  expect(body.details.map((d) => d.path)).toContain("body.text");
});

test("a client that goes away mid-answer stops the model call; the conversation keeps what was said, whole", async () => {
  model.script({ text: "Counting the runs one by one now.", pauseAfter: 2 });
  const aborted = model.streams.aborted;
  const client = new AbortController();
  const res = await askStreamed("Count the runs", {}, client.signal);
  const events = eventReader(res);
  const first = await events.next();
  expect(first?.event).toBe("conversation");
  const conversationId = first?.data.conversation_id as string;
  expect((await events.next())?.data).toEqual({ text: "Counting " });
  expect((await events.next())?.data).toEqual({ text: "the " });
  client.abort();
  // The server let go of the model's answer: the model saw its stream given up, not finished.
  expect(await waitUntil(() => model.streams.aborted > aborted, 10_000)).toBe(true);
  model.release();
  const kept = async () =>
    (await json<{ messages: { role: string; text: string }[] }>(await s.call("GET", `/assistant/conversations/${conversationId}`))).messages;
  expect(await waitUntilAsync(async () => (await kept()).length === 2, 10_000)).toBe(true);
  expect(await kept()).toEqual([
    { role: "user", text: "Count the runs" },
    { role: "assistant", text: "Counting the (interrupted: the answer was not read to its end)" },
  ]);
});

test("svc assistant ask on a terminal prints the words as they arrive, then the answer; --json stays the API's JSON", async () => {
  const home = tempDir("svc-cli-tty-");
  const main = join(import.meta.dir, "..", "src", "main.ts");
  const inTty = (args: string) =>
    Bun.spawn(["script", "-qec", `${process.execPath} ${main} assistant ask ${args}`, "/dev/null"], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "config"), SVC_SERVER: s.url, SVC_API_KEY: s.key },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  try {
    model.script({ text: "Shop looks healthy today.", pauseAfter: 2 });
    const proc = inTty("'How is the shop?'");
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let out = "";
    while (!out.includes("Shop looks")) {
      const { done, value } = await reader.read();
      if (done) break;
      out += decoder.decode(value, { stream: true });
    }
    // The first words are on the terminal while the model holds the rest back.
    expect(out).toContain("Shop looks");
    expect(model.streams.finished).toBeLessThan(model.streams.begun);
    model.release();
    for (let r = await reader.read(); !r.done; r = await reader.read()) out += decoder.decode(r.value, { stream: true });
    expect(await proc.exited).toBe(0);
    expect(out).toStartWith("Shop looks healthy today.\r\n");
    expect(out.split("Shop looks healthy today.").length).toBe(3); // the words as they came, then the answer
    model.script({ text: "Plain JSON." });
    const json = inTty("hello --json");
    const text = await new Response(json.stdout).text();
    expect(await json.exited).toBe(0);
    expect(JSON.parse(text.replaceAll("\r\n", "\n"))).toMatchObject({ reply: "Plain JSON.", actions: [] });
    expect(model.requests.at(-1)?.stream).toBeUndefined();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

describe("streamed, on a server with tight bounds (an answer within 1 s, 16 tokens a turn)", () => {
  let own: TestServer;
  beforeAll(async () => {
    own = await startTestServer(
      { rate_limit: { enabled: false }, assistant: { timeout_ms: 1000, max_tokens: 16 } },
      { SVC_ASSISTANT_BASE_URL: model.baseUrl, SVC_ASSISTANT_MODEL: "scripted" },
    );
  });
  afterAll(() => own.stop());

  const events = async (res: Response) => {
    const reader = eventReader(res);
    const out: { event: string; data: Record<string, unknown> }[] = [];
    for (let e = await reader.next(); e; e = await reader.next()) out.push(e);
    return out;
  };

  test("the time bound holds: a model that stops mid-answer is let go and done says so", async () => {
    model.script({ text: "Thinking very hard about this.", pauseAfter: 1 });
    const aborted = model.streams.aborted;
    const seen = await events(await askStreamed("Think", {}, undefined, own));
    // The model call was given up, not left running.
    expect(await waitUntil(() => model.streams.aborted > aborted, 10_000)).toBe(true);
    model.release();
    expect(seen.map((e) => e.event).filter((e) => e !== "delta")).toEqual(["conversation", "done"]);
    expect((seen.at(-1)?.data as unknown as Reply).reply).toBe("I could not finish within 1000 ms, the time one message may take.");
  });

  test("the token bound holds: a turn streams at most 8 characters a token, the rest is not read", async () => {
    const long = "x".repeat(100).concat(" ", "y".repeat(100));
    model.script({ text: long, chunks: 20 });
    const seen = await events(await askStreamed("Go on", {}, undefined, own));
    const said = seen.filter((e) => e.event === "delta").map((e) => e.data.text as string);
    expect(said.join("")).toBe(long.slice(0, 16 * 8));
    expect((seen.at(-1)?.data as unknown as Reply).reply).toBe(long.slice(0, 16 * 8));
  });

  test("a failure after the stream began is an error event in the error shape, and the stream ends", async () => {
    model.script({ tools: [{ name: "list_projects", arguments: {} }], pauseAfter: 1 });
    const res = await askStreamed("Which projects?", {}, undefined, own);
    expect(res.status).toBe(200);
    const reader = eventReader(res);
    expect((await reader.next())?.event).toBe("conversation");
    // The store fails under the answer: the action cannot be kept.
    await own.sql("DROP TABLE assistant_actions");
    model.release();
    const failed = await reader.next();
    expect(failed?.event).toBe("error");
    expect(failed?.data.error).toBe("internal_error");
    expect(String(failed?.data.message)).toContain("request id");
    expect(await reader.next()).toBeNull();
  });
});

test("figure: time to first byte of an assistant reply (one model turn, scripted model on loopback)", async () => {
  model.script({ text: "Hello." });
  const t0 = performance.now();
  const res = await fetch(`${s.api}/assistant/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({ text: "hello" }),
  });
  const reader = res.body?.getReader();
  await reader?.read();
  const ttfb = performance.now() - t0;
  await reader?.cancel();
  console.log(`assistant reply time to first byte: ${ttfb.toFixed(1)} ms`);
  expect(res.status).toBe(200);
});
