// The assistant panel: a conversation with the model that calls svc's operations with the signed-in person's
// rights. The answer is read as an event stream: its words show as they arrive, then its actions. Actions that
// change something wait for Confirm; without a configured model the panel says so as it opens, and how to set one.
import type { z } from "zod";
import type { MessageRole } from "../manifest/assistant";
import { useEffect, useState } from "preact/hooks";
import type { OpOutput } from "../client/api-client";
import { ApiError, call, callStream } from "./api";
import { useAction } from "./hooks";
import { Badge, ErrorNote } from "./ui";

type Action = OpOutput<"confirmAssistantAction">;
interface Entry {
  role: z.infer<typeof MessageRole>;
  text: string;
  actions: Action[];
  /** The answer is still arriving. */
  streaming?: boolean;
}

const HOW_TO_CONFIGURE =
  "The server's operator configures the assistant's model: [assistant] base_url and model in svc.toml (or SVC_ASSISTANT_BASE_URL and SVC_ASSISTANT_MODEL), any OpenAI-compatible chat-completions endpoint with tool calls; the [generation.llm] settings serve too.";

export function AssistantPanel({ onClose }: { onClose: () => void }) {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [conversation, setConversation] = useState<string | undefined>(undefined);
  const [text, setText] = useState("");
  const [unconfigured, setUnconfigured] = useState<string | null>(null);
  const a = useAction();

  // The server says whether it has a model (whoami): without one, the panel says so before anything is asked.
  useEffect(() => {
    call("whoami", {}).then(
      (me) => {
        if (!me.assistant.available) setUnconfigured(me.assistant.problem ?? "no model is configured for the assistant");
      },
      () => undefined,
    );
  }, []);

  const send = async (e: Event) => {
    e.preventDefault();
    const message = text.trim();
    if (!message) return;
    setEntries((es) => [...es, { role: "user", text: message, actions: [] }, { role: "assistant", text: "", actions: [], streaming: true }]);
    setText("");
    // The answer being made is the last entry until its stream is done.
    const answering = (change: (en: Entry) => Entry) => setEntries((es) => es.map((en, i) => (i === es.length - 1 && en.streaming ? change(en) : en)));
    await a.run(async () => {
      try {
        const r = await callStream("sendAssistantMessage", { text: message, ...(conversation ? { conversation_id: conversation } : {}) }, (event, data) => {
          if (event === "conversation") setConversation((data as { conversation_id: string }).conversation_id);
          else if (event === "delta") answering((en) => ({ ...en, text: en.text + (data as { text: string }).text }));
          else if (event === "action") answering((en) => ({ ...en, actions: [...en.actions, data as Action] }));
        });
        setConversation(r.conversation_id);
        answering(() => ({ role: "assistant", text: r.reply, actions: r.actions }));
      } catch (err) {
        // An answer that failed is not shown half-made: the error says what happened.
        setEntries((es) => es.filter((en) => !en.streaming));
        if (err instanceof ApiError && err.status === 409 && err.message.includes("no model")) setUnconfigured(err.message);
        else throw err;
      }
    });
  };

  const confirm = (id: string) =>
    a.run(async () => {
      const done = await call("confirmAssistantAction", { actionId: id });
      setEntries((es) => es.map((en) => ({ ...en, actions: en.actions.map((x) => (x.id === id ? done : x)) })));
    });

  return (
    // Escape closes it, as it does a confirmation; the layout then brings the focus back to the Assistant button.
    <aside
      class="assistant card"
      aria-label="Assistant"
      onKeyDown={(e) => {
        if (e.key === "Escape" && !e.defaultPrevented) {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <div class="card-head">
        <h2>Assistant</h2>
        <button type="button" class="btn btn-quiet" onClick={onClose}>
          Close
        </button>
      </div>
      <ol class="assistant-log">
        {entries.map((en, i) => (
          <li key={`${i}-${en.role}`} class={`assistant-${en.role}`} aria-busy={en.streaming ? "true" : undefined}>
            <strong>{en.role === "user" ? "You" : "Assistant"}:</strong> {en.text}
            {en.streaming && <span class="muted"> …</span>}
            {en.actions.length > 0 && (
              <ul class="assistant-actions">
                {en.actions.map((x) => (
                  <li key={x.id}>
                    <code>{x.tool}</code> <code class="muted">{JSON.stringify(x.arguments)}</code> <Badge status={x.status} />
                    {x.status === "needs_confirmation" && (
                      <button type="button" class="btn btn-primary" disabled={a.busy} onClick={() => void confirm(x.id)}>
                        Confirm
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ol>
      {/* After any question, as a reply would be. */}
      {unconfigured && (
        <div class="note" role="status">
          <p>{unconfigured.startsWith("no model") ? "No model is configured for the assistant." : `The assistant cannot answer: ${unconfigured}.`}</p>
          <p class="muted">{HOW_TO_CONFIGURE}</p>
        </div>
      )}
      <ErrorNote message={a.error} details={a.details} />
      <form onSubmit={send} class="assistant-form">
        <label for="assistant-text">Message</label>
        <textarea id="assistant-text" rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button class="btn btn-primary" disabled={a.busy || unconfigured !== null}>
          {a.busy ? "Thinking…" : "Send"}
        </button>
      </form>
    </aside>
  );
}
