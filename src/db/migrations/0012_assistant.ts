// The in-app assistant: a person's conversations (the messages exchanged with the model) and the actions the
// model asked for (tool calls: done, held for confirmation, refused, failed).
import type { Kysely } from "kysely";

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("assistant_conversations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id").onDelete("cascade"))
    .addColumn("user_id", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("messages", "text", (c) => c.notNull())
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("assistant_conversations_owner").on("assistant_conversations").columns(["workspace_id", "user_id", "id"]).execute();
  await db.schema
    .createTable("assistant_actions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("conversation_id", "text", (c) => c.notNull().references("assistant_conversations.id").onDelete("cascade"))
    .addColumn("tool", "text", (c) => c.notNull())
    .addColumn("arguments", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("result", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("assistant_actions_conversation").on("assistant_actions").columns(["conversation_id", "id"]).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable("assistant_actions").execute();
  await db.schema.dropTable("assistant_conversations").execute();
}
