// The two client-side MCP tools: wait_for_run and wait_for_generation, capped below the usual 60 s client timeout.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { waitForGeneration, waitForRun, type WaitResult } from "../src/client/wait";
import { errorResult, type ToolContext } from "./tools";

export const DEFAULT_WAIT_SECONDS = 45;
export const MAX_WAIT_SECONDS = 50;

const TimeoutSeconds = z
  .number()
  .int()
  .min(1)
  .max(MAX_WAIT_SECONDS)
  // A default (not just optional): advertised as "default": 45 in the tool's input schema, and filled in on parse.
  .default(DEFAULT_WAIT_SECONDS)
  .describe(`How long to wait, in seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}); call again if it returns timed_out`);

function projectField(ctx: ToolContext): z.ZodType {
  const base = z.string().min(1).max(200);
  return ctx.defaultProject
    ? base.optional().describe(`Project id (prj_…) or slug; default "${ctx.defaultProject}"`)
    : base.describe("Project id (prj_…) or slug");
}

interface Extra {
  _meta?: { progressToken?: string | number };
  signal: AbortSignal;
  sendNotification: (n: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
}

function progressSender(extra: Extra, describe: (r: Record<string, unknown>) => string): (r: Record<string, unknown>) => Promise<void> {
  const token = extra._meta?.progressToken;
  let n = 0;
  return async (r) => {
    if (token === undefined) return;
    n++;
    await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: n, message: describe(r) } });
  };
}

function waitResult<T extends { status: string; id: string }>(noun: "run" | "generation", res: WaitResult<T>, again: string): CallToolResult {
  const structured: Record<string, unknown> = { timed_out: res.timedOut, [noun]: res.record };
  if (res.timedOut) structured.hint = `The ${noun} is still ${res.record.status}. ${again}`;
  const text = res.timedOut ? `${noun} ${res.record.id} is still ${res.record.status}; ${again}` : `${noun} ${res.record.id} finished: ${res.record.status}.`;
  return { content: [{ type: "text", text: `${text}\n${JSON.stringify(structured)}` }], structuredContent: structured };
}

export function registerWaitTools(server: McpServer, ctx: ToolContext): void {
  server.registerTool(
    "wait_for_run",
    {
      description: "Wait until a run ends (passed, failed, error, timed_out or cancelled) and return it. Polls get_run on the caller's behalf.",
      inputSchema: z.strictObject({
        project: projectField(ctx),
        runId: z.string().min(1).max(200).describe("Run id (run_…)"),
        timeout_seconds: TimeoutSeconds,
      }),
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args: { project?: unknown; runId: string; timeout_seconds?: number }, extra: Extra) => {
      try {
        const project = typeof args.project === "string" ? args.project : (ctx.defaultProject ?? "");
        const onUpdate = progressSender(extra, (r) => `run ${r.status}`);
        const res = await waitForRun(
          ctx.client,
          { project, runId: args.runId },
          { timeoutMs: (args.timeout_seconds ?? DEFAULT_WAIT_SECONDS) * 1000, onUpdate, signal: extra.signal, firstReadAtOnce: true },
        );
        return waitResult("run", res, `Call wait_for_run again with runId "${args.runId}" to keep waiting.`);
      } catch (e) {
        return errorResult(e);
      }
    },
  );

  server.registerTool(
    "wait_for_generation",
    {
      description: "Wait until a feature's generation ends (succeeded, failed or cancelled) and return it. Polls get_generation on the caller's behalf.",
      inputSchema: z.strictObject({
        project: projectField(ctx),
        feature: z.string().min(1).max(200).describe("Feature id (fea_…)"),
        timeout_seconds: TimeoutSeconds,
      }),
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args: { project?: unknown; feature: string; timeout_seconds?: number }, extra: Extra) => {
      try {
        const project = typeof args.project === "string" ? args.project : (ctx.defaultProject ?? "");
        const onUpdate = progressSender(extra, (g) => {
          const p = g.progress as { stage?: string; done?: number; total?: number } | undefined;
          return `generation ${g.status}${p ? ` ${p.stage} ${p.done}/${p.total}` : ""}`;
        });
        const res = await waitForGeneration(
          ctx.client,
          { project, feature: args.feature },
          { timeoutMs: (args.timeout_seconds ?? DEFAULT_WAIT_SECONDS) * 1000, onUpdate, signal: extra.signal, firstReadAtOnce: true },
        );
        return waitResult("generation", res, `Call wait_for_generation again with feature "${args.feature}" to keep waiting.`);
      } catch (e) {
        return errorResult(e);
      }
    },
  );
}
