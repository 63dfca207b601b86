// The assistant's conversations and actions, always read through their owner (workspace and person).
import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type { AssistantActionTable, AssistantConversationTable, DB } from "../../db/schema";

export type ConversationRow = Selectable<AssistantConversationTable>;
export type ActionRow = Selectable<AssistantActionTable>;

export interface Owner {
  workspaceId: string;
  userId: string;
}

export function conversationsQuery(db: Kysely<DB>, owner: Owner) {
  return db
    .selectFrom("assistant_conversations")
    .select(["id", "title", "created_at", "updated_at"])
    .where("workspace_id", "=", owner.workspaceId)
    .where("user_id", "=", owner.userId);
}

export async function findConversation(db: Kysely<DB>, owner: Owner, id: string): Promise<ConversationRow | undefined> {
  return db
    .selectFrom("assistant_conversations")
    .selectAll()
    .where("id", "=", id)
    .where("workspace_id", "=", owner.workspaceId)
    .where("user_id", "=", owner.userId)
    .executeTakeFirst();
}

export async function insertConversation(db: Kysely<DB>, row: Insertable<AssistantConversationTable>): Promise<void> {
  await db.insertInto("assistant_conversations").values(row).execute();
}

/** How often an append reads again after losing to another writer before it gives up (each loss is another's progress). */
const APPEND_ATTEMPTS = 100;

/**
 * Appends messages to a conversation's history. Several writers meet here — two messages answered at once, an
 * action confirmed while a message is answered — and each must keep what the others wrote. So each appends only
 * what it added, as a compare-and-swap on the stored text: the history only ever grows, so the same text is the
 * same history, and when another writer came first the row is read again and the messages go after that writer's.
 * One conditional UPDATE behaves alike on SQLite (writes are serialised) and PostgreSQL (a waiting UPDATE checks
 * its condition again on the row as committed), and no lock is held while the model is asked.
 */
export async function appendMessages(db: Kysely<DB>, id: string, messages: unknown[], updatedAt: string): Promise<void> {
  if (messages.length === 0) return;
  for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
    const row = await db.selectFrom("assistant_conversations").select("messages").where("id", "=", id).executeTakeFirst();
    if (!row) return;
    const next = JSON.stringify([...storedMessages(row.messages), ...messages]);
    const r = await db
      .updateTable("assistant_conversations")
      .set({ messages: next, updated_at: updatedAt })
      .where("id", "=", id)
      .where("messages", "=", row.messages)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return;
  }
  throw new Error(`the history of conversation ${id} kept changing under ${APPEND_ATTEMPTS} attempts to add to it`);
}

/** The stored history as a list; a damaged one is started again rather than refusing every later message. */
function storedMessages(text: string): unknown[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

export async function insertAction(db: Kysely<DB>, row: Insertable<AssistantActionTable>): Promise<void> {
  await db.insertInto("assistant_actions").values(row).execute();
}

export async function conversationActions(db: Kysely<DB>, conversationId: string): Promise<ActionRow[]> {
  return db.selectFrom("assistant_actions").selectAll().where("conversation_id", "=", conversationId).orderBy("created_at").orderBy("id").execute();
}

/** An action of the owner's conversations, with its conversation's id. */
export async function findOwnAction(db: Kysely<DB>, owner: Owner, id: string): Promise<ActionRow | undefined> {
  return db
    .selectFrom("assistant_actions")
    .innerJoin("assistant_conversations", "assistant_conversations.id", "assistant_actions.conversation_id")
    .selectAll("assistant_actions")
    .where("assistant_actions.id", "=", id)
    .where("assistant_conversations.workspace_id", "=", owner.workspaceId)
    .where("assistant_conversations.user_id", "=", owner.userId)
    .executeTakeFirst();
}

/** Moves a held action to its outcome; false when it was no longer held (confirmed twice at once). */
export async function settleHeldAction(db: Kysely<DB>, id: string, patch: Updateable<AssistantActionTable>): Promise<boolean> {
  const r = await db.updateTable("assistant_actions").set(patch).where("id", "=", id).where("status", "=", "needs_confirmation").executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function updateAction(db: Kysely<DB>, id: string, patch: Updateable<AssistantActionTable>): Promise<void> {
  await db.updateTable("assistant_actions").set(patch).where("id", "=", id).execute();
}
