// One MCP tool per manifest operation: flattened input schema, summary, hints, and the API's JSON as the result.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ApiClient, ApiResponse } from "../src/client/api-client";
import { ClientError, mcpIsErrorFor } from "../src/client/errors";
import { objectShape } from "../src/client/schema-fields";
import { type Operation, operations } from "../src/manifest/index";

export interface ToolContext {
  client: ApiClient;
  /** `svc mcp --project P`: used when a tool call leaves `project` out. */
  defaultProject: string | null;
}

/** Path parameters, query and body fields as one object; `project` becomes optional when there is a default. */
export function flatInputSchema(op: Operation, defaultProject: string | null): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const part of [op.params, op.query, op.body, op.headers]) {
    for (const [name, schema] of Object.entries(objectShape(part))) {
      if (name in shape) throw new Error(`${op.name}: field "${name}" appears twice in its input`);
      shape[name] = schema;
    }
  }
  if (defaultProject && shape.project) {
    shape.project = z.string().min(1).max(200).optional().describe(`Project id (prj_…) or slug; default "${defaultProject}"`);
  }
  return z.strictObject(shape);
}

/** A sentence for people (and assistants) beside the JSON. */
export function summarize(op: Operation, json: unknown): string {
  if (json === null) return `${op.name}: done.`;
  const rec = json as Record<string, unknown>;
  if (Array.isArray(rec.data)) {
    const more = typeof rec.next_cursor === "string" ? ` (more: pass cursor "${rec.next_cursor}")` : "";
    return `${op.name}: ${rec.data.length} item${rec.data.length === 1 ? "" : "s"}${more}.`;
  }
  const parts = [rec.id ?? rec.user_id, rec.name ?? rec.automation_name ?? rec.email, rec.status].filter((x) => typeof x === "string");
  return `${op.name}: ${parts.join(" ")}.`;
}

export function errorResult(e: unknown): CallToolResult {
  const err = e instanceof ClientError ? e : new ClientError(0, "internal_error", (e as Error)?.message ?? String(e));
  const body = err.toJSON();
  return {
    isError: mcpIsErrorFor(err),
    content: [{ type: "text", text: `${err.error}: ${err.message}${(err.details ?? []).map((d) => `\n  ${d.path}: ${d.message}`).join("")}` }],
    structuredContent: body,
  };
}

export function successResult(op: Operation, res: ApiResponse): CallToolResult {
  if (res.raw) {
    const { contentType, bytes } = res.raw;
    if (contentType.startsWith("image/")) {
      return { content: [{ type: "image", data: Buffer.from(bytes).toString("base64"), mimeType: contentType.split(";")[0] ?? contentType }] };
    }
    const text = /xml|json|text/.test(contentType) ? new TextDecoder().decode(bytes) : Buffer.from(bytes).toString("base64");
    return {
      content: [{ type: "text", text }],
      structuredContent: { content_type: contentType, [/xml|json|text/.test(contentType) ? "text" : "base64"]: text },
    };
  }
  const structured = res.json === null ? { ok: true } : (res.json as Record<string, unknown>);
  return { content: [{ type: "text", text: `${summarize(op, res.json)}\n${JSON.stringify(structured)}` }], structuredContent: structured };
}

export function withDefaultProject(op: Operation, args: Record<string, unknown>, defaultProject: string | null): Record<string, unknown> {
  if (args.project === undefined && defaultProject && "project" in objectShape(op.params)) return { ...args, project: defaultProject };
  return args;
}

export function registerOperationTools(server: McpServer, ctx: ToolContext): void {
  for (const op of operations) {
    if (op.sessionOnly) continue;
    server.registerTool(
      op.name,
      {
        description: op.description ? `${op.summary}. ${op.description}` : op.summary,
        inputSchema: flatInputSchema(op, ctx.defaultProject),
        annotations: {
          readOnlyHint: op.hints.readOnly ?? false,
          destructiveHint: op.hints.destructive ?? false,
          idempotentHint: op.hints.idempotent ?? false,
          openWorldHint: false,
        },
      },
      async (args: Record<string, unknown>) => {
        try {
          return successResult(op, await ctx.client.send(op, withDefaultProject(op, args, ctx.defaultProject)));
        } catch (e) {
          return errorResult(e);
        }
      },
    );
  }
}
