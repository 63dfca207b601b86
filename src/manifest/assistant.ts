// The in-app assistant: a person's conversation with a model that calls svc's operations (the MCP tools) with
// that person's rights. Read-only tools run at once; anything else waits for the person's confirmation.
import { z } from "zod";
import { defineOperation, ListQuery, page, PathId, Timestamp } from "./define";

/** Who said a message of a conversation. */
export const MessageRole = z.enum(["user", "assistant"]);
export const AssistantActionStatus = z
  .enum(["done", "needs_confirmation", "refused", "failed"])
  .describe(
    "done: ran (read-only tools at once, others once confirmed); needs_confirmation: held until the person confirms it; refused: the person may not take it (never held); failed: ran and failed",
  );

export const AssistantAction = z
  .object({
    id: z.string().describe("Action id (act_…)"),
    conversation_id: z.string().describe("The conversation the action belongs to"),
    tool: z.string().describe("The tool the model called (an MCP tool name, e.g. run_automation)"),
    arguments: z.record(z.string(), z.unknown()).describe("The arguments the model gave the tool"),
    status: AssistantActionStatus,
    result: z.unknown().optional().describe("The tool's compact result (as MCP gives it), or the error that refused or failed it"),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "AssistantAction" });

export const AssistantReply = z
  .object({
    conversation_id: z.string().describe("The conversation (asst_…): pass it with the next message to continue"),
    reply: z.string().describe("The model's answer"),
    actions: z.array(AssistantAction).describe("The actions of this message only"),
  })
  .meta({ id: "AssistantReply" });

export const AssistantConversationSummary = z
  .object({
    id: z.string().describe("Conversation id (asst_…)"),
    title: z.string().describe("The conversation's first message, shortened"),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "AssistantConversationSummary" });

export const AssistantMessage = z
  .object({
    role: MessageRole.describe("Who said it"),
    text: z.string().describe("What was said"),
  })
  .meta({ id: "AssistantMessage" });

export const AssistantConversation = AssistantConversationSummary.extend({
  messages: z.array(AssistantMessage).describe("The person's messages and the model's answers, oldest first"),
  actions: z.array(AssistantAction).describe("Every action of the conversation, oldest first"),
}).meta({ id: "AssistantConversation" });

const NO_MODEL = "409 conflict when no model is configured ([assistant] base_url and model, or [generation.llm]).";

export const sendAssistantMessage = defineOperation({
  name: "send_assistant_message",
  method: "POST",
  path: "/assistant/messages",
  summary: "Ask the in-app assistant: it answers, calling svc's tools with your rights",
  description: `Read-only tools run at once; anything else is held as needs_confirmation until confirmed; what you may not do is refused. ${NO_MODEL}`,
  body: z.strictObject({
    conversation_id: z.string().min(1).max(200).optional().describe("Continue this conversation (asst_…); absent: start a new one"),
    text: z.string().trim().min(1).max(20_000).describe("The message"),
  }),
  response: AssistantReply,
  errors: ["not_found", "conflict"],
  hints: { openWorld: true },
  cli: { words: ["assistant", "ask"], args: ["text"], flags: { conversation_id: "conversation" } },
  stream: {
    description:
      "The answer as it is made: conversation first, delta as the model's words arrive (also words said before a tool call; done's reply is the final answer), action as each action is decided or done, then done with the JSON answer.",
    events: {
      conversation: z.object({ conversation_id: z.string().describe("The conversation (asst_…)") }).meta({ id: "AssistantConversationEvent" }),
      delta: z.object({ text: z.string().describe("The next words of the model's answer") }).meta({ id: "AssistantDeltaEvent" }),
      action: AssistantAction,
    },
  },
});

export const confirmAssistantAction = defineOperation({
  name: "confirm_assistant_action",
  method: "POST",
  path: "/assistant/actions/{actionId}/confirm",
  summary: "Run an action the assistant held for your confirmation",
  description: "Runs with your rights. Only your own actions; a refused action answers 403, one already run 409.",
  params: z.object({ actionId: PathId.describe("Action id (act_…)") }),
  response: AssistantAction,
  errors: ["not_found", "forbidden", "conflict"],
  cli: { words: ["assistant", "confirm"], args: ["actionId"] },
});

export const listAssistantConversations = defineOperation({
  name: "list_assistant_conversations",
  method: "GET",
  path: "/assistant/conversations",
  summary: "List your conversations with the assistant, newest first",
  query: ListQuery,
  response: page(AssistantConversationSummary, "AssistantConversationPage"),
  hints: { readOnly: true },
  cli: { words: ["assistant", "list"] },
});

export const getAssistantConversation = defineOperation({
  name: "get_assistant_conversation",
  method: "GET",
  path: "/assistant/conversations/{conversationId}",
  summary: "Show one of your conversations with the assistant: messages and actions",
  params: z.object({ conversationId: PathId.describe("Conversation id (asst_…)") }),
  response: AssistantConversation,
  errors: ["not_found"],
  hints: { readOnly: true },
  cli: { words: ["assistant", "show"], args: ["conversationId"] },
});
