// wait_for_run, wait_for_group_run and wait_for_generation: poll the reading operation until the record ends
// (or the wait's time is up), sending progress notifications when the client asked for them.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ClientError } from "../src/client/errors";
import { type Operation, ops } from "../src/manifest/index";
import { GroupRun, Run, TERMINAL_GENERATION_STATUSES, TERMINAL_RUN_STATUSES } from "../src/manifest/records";
import type { Executor } from "./executor";
import { type CompactGroupRun, type CompactRun, compactJson, groupCounts, groupRunText, runText, waitOutputSchema } from "./results";
import { argumentSchema, errorResult, type ToolContext, type ToolDef, type ToolExtra } from "./tools";

export const DEFAULT_WAIT_SECONDS = 45;
export const MAX_WAIT_SECONDS = 50;

const TimeoutSeconds = z
  .number()
  .int()
  .min(1)
  .max(MAX_WAIT_SECONDS)
  .default(DEFAULT_WAIT_SECONDS)
  .describe(`How long to wait, in seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}); call again if it returns timed_out`);

function projectField(ctx: ToolContext): z.ZodOptional<z.ZodString> | z.ZodString {
  const base = z.string().min(1).max(200);
  return ctx.defaultProject
    ? base.optional().describe(`Project: its id (prj_…) or slug; default "${ctx.defaultProject}"`)
    : base.describe("Project: its id (prj_…) or slug");
}

type Rec = Record<string, unknown> & { id: string; status: string };

/** Longest a single read is held by the server (get_run's ?wait=): short enough for progress to move. */
const HELD_READ_SECONDS = 10;

/** How long past its deadline a wait still waits for a read's answer: a server that stopped answering ends it then. */
const READ_GRACE_MS = 2_000;

/**
 * Reads until `done` or the deadline. The first read answers at once; the next ones are held by the server until
 * the record ends (long-poll, `wait`), so the answer comes as soon as it is over. A read answered early without
 * the end (the server's waiters are all taken) falls back to polling with a growing interval, never spinning. A
 * read still unanswered READ_GRACE_MS past the deadline (the server stopped answering) is given up: the wait ends
 * timed out with the record as last read, within the minute MCP clients wait for a call.
 */
async function poll(
  read: (waitSeconds: number, signal: AbortSignal) => Promise<Rec>,
  done: (r: Rec) => boolean,
  timeoutMs: number,
  extra: ToolExtra,
  describe: (r: Rec) => string,
): Promise<{ record: Rec; timedOut: boolean }> {
  const token = extra._meta?.progressToken;
  const deadline = Date.now() + timeoutMs;
  let interval = 500;
  let wait = 0;
  let last: Rec | null = null;
  for (let n = 1; ; n++) {
    const asked = Date.now();
    const bounded = AbortSignal.any([extra.signal, AbortSignal.timeout(Math.max(0, deadline - asked) + READ_GRACE_MS)]);
    let record: Rec;
    try {
      record = await read(wait, bounded);
    } catch (e) {
      if (last !== null && !extra.signal.aborted && bounded.aborted) return { record: last, timedOut: true };
      throw e;
    }
    last = record;
    if (token !== undefined) {
      await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: n, message: describe(record) } });
    }
    if (done(record)) return { record, timedOut: false };
    const left = deadline - Date.now();
    if (left <= 0 || extra.signal.aborted) return { record, timedOut: true };
    const heldFully = wait > 0 && Date.now() - asked >= wait * 1000 - 50;
    if (wait > 0 && !heldFully) {
      await Bun.sleep(Math.min(interval, left));
      interval = Math.min(Math.round(interval * 1.5), 5000);
    }
    wait = Math.max(1, Math.min(HELD_READ_SECONDS, Math.floor((deadline - Date.now()) / 1000)));
  }
}

function parseArgs<T extends z.ZodObject>(schema: T, args: Record<string, unknown>): z.output<T> {
  const parsed = schema.safeParse(args);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((i) => ({ path: i.path.join(".") || (i.code === "unrecognized_keys" ? i.keys.join(", ") : ""), message: i.message }));
  throw new ClientError(400, "invalid_request", `the arguments are not valid: ${details[0] ? `${details[0].path}: ${details[0].message}` : ""}`, details);
}

async function read(exec: Executor, op: Operation, input: Record<string, unknown>, signal: AbortSignal): Promise<Rec> {
  return (await exec.call(op, input, { signal })).json as Rec;
}

const runDone = (r: Rec) => (TERMINAL_RUN_STATUSES as readonly string[]).includes(r.status);
const generationDone = (g: Rec) => (TERMINAL_GENERATION_STATUSES as readonly string[]).includes(g.status);
/** A generation's end in a line: what it did, and for a failed one why (the reason says what to do about it). */
function generationText(g: Rec): string {
  const said = [g.result, g.error].filter((v): v is string => typeof v === "string" && v !== "");
  return `generation ${g.id} finished: ${g.status}.${said.map((t) => ` ${t}`).join("")}`;
}

const annotations = { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false };

function waitResult(noun: string, structuredRecord: Record<string, unknown>, rec: Rec, timedOut: boolean, again: string, text: string): CallToolResult {
  const structured: Record<string, unknown> = { timed_out: timedOut, [noun]: structuredRecord };
  if (timedOut) structured.hint = `The ${noun.replace("_", " ")} is still ${rec.status}. ${again}`;
  const head = timedOut ? `${noun.replace("_", " ")} ${rec.id} is still ${rec.status}; ${again}` : text;
  return { content: [{ type: "text", text: head }], structuredContent: structured };
}

export function waitTools(ctx: ToolContext): ToolDef[] {
  const exec = ctx.executor;
  const project = (a: { project?: unknown }) => (typeof a.project === "string" ? a.project : (ctx.defaultProject ?? ""));

  const runArgs = z.strictObject({
    project: projectField(ctx),
    run: z.string().min(1).max(200).describe("Run id (run_…), as run_automation returned it"),
    timeout_seconds: TimeoutSeconds,
    include: z
      .array(z.enum(["responses"]))
      .optional()
      .describe('Parts left out of the result unless asked for: "responses"'),
  });
  const groupRunArgs = z.strictObject({
    project: projectField(ctx),
    group_run: z.string().min(1).max(200).describe("Group run id (grn_…), as run_group or run_feature returned it"),
    timeout_seconds: TimeoutSeconds,
  });
  const generationArgs = z.strictObject({
    project: projectField(ctx),
    generation: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("What start_generation returned: its id (gen_…); or the feature's id or exact name (its latest generation)"),
    feature: z.string().min(1).max(200).optional().describe("The generation's feature (feature_id of start_generation's answer): saves looking it up"),
    timeout_seconds: TimeoutSeconds,
  });

  return [
    {
      toolset: "runs",
      readOnly: true,
      tool: {
        name: "wait_for_run",
        title: "Wait for a run",
        description:
          "Wait until a run ends (passed, failed, error, timed_out or cancelled) and return it summarised: counts, each failing step with its message and expected vs actual, passing steps one line each.",
        inputSchema: { ...argumentSchema(runArgs), type: "object" },
        outputSchema: waitOutputSchema("run", Run),
        annotations,
      },
      async call(args, extra) {
        try {
          const a = parseArgs(runArgs, args);
          const res = await poll(
            (wait, signal) => read(exec, ops.getRun, { project: project(a), runId: a.run, wait }, signal),
            runDone,
            a.timeout_seconds * 1000,
            extra,
            (r) => `run ${r.status}`,
          );
          const compact = compactJson(Run, res.record, new Set(a.include ?? [])) as z.output<typeof CompactRun>;
          return waitResult("run", compact, res.record, res.timedOut, `Call wait_for_run again with run "${a.run}" to keep waiting.`, runText(compact));
        } catch (e) {
          return errorResult(e);
        }
      },
    },
    {
      toolset: "runs",
      readOnly: true,
      tool: {
        name: "wait_for_group_run",
        title: "Wait for a group run",
        description: "Wait until a group run (run_group, run_feature) ends and return it: counts by status and each run in one line.",
        inputSchema: { ...argumentSchema(groupRunArgs), type: "object" },
        outputSchema: waitOutputSchema("group_run", GroupRun),
        annotations,
      },
      async call(args, extra) {
        try {
          const a = parseArgs(groupRunArgs, args);
          const res = await poll(
            (wait, signal) => read(exec, ops.getGroupRun, { project: project(a), groupRunId: a.group_run, wait }, signal),
            runDone,
            a.timeout_seconds * 1000,
            extra,
            (r) => `group run ${r.status}`,
          );
          const compact = compactJson(GroupRun, res.record, new Set()) as z.output<typeof CompactGroupRun>;
          const text = groupRunText(compact, `group run ${compact.id} finished: ${compact.status}; ${groupCounts(compact.summary)}.`);
          return waitResult(
            "group_run",
            compact,
            res.record,
            res.timedOut,
            `Call wait_for_group_run again with group_run "${a.group_run}" to keep waiting.`,
            text,
          );
        } catch (e) {
          return errorResult(e);
        }
      },
    },
    {
      toolset: "generation",
      readOnly: true,
      tool: {
        name: "wait_for_generation",
        title: "Wait for a generation",
        description: "Wait until a generation ends (succeeded, failed or cancelled) and return it. Takes what start_generation returned.",
        inputSchema: { ...argumentSchema(generationArgs), type: "object" },
        outputSchema: waitOutputSchema("generation", ops.getGeneration.response),
        annotations,
      },
      async call(args, extra) {
        try {
          const a = parseArgs(generationArgs, args);
          const given = a.generation ?? a.feature;
          if (given === undefined) {
            throw new ClientError(400, "invalid_request", "name the generation: generation (what start_generation returned) or feature", [
              { path: "generation", message: "required (or feature)" },
            ]);
          }
          const byId = a.generation?.startsWith("gen_") ? a.generation : null;
          const feature = a.feature ?? (byId ? await featureOfGeneration(exec, project(a), byId, extra.signal) : given);
          const res = await poll(
            async (wait, signal) => {
              const g = await read(exec, ops.getGeneration, { project: project(a), feature, wait }, signal);
              if (byId && g.id !== byId) {
                throw new ClientError(404, "not_found", `generation ${byId} is not the latest of feature ${feature} (that is ${g.id})`);
              }
              return g;
            },
            generationDone,
            a.timeout_seconds * 1000,
            extra,
            (g) => {
              const p = g.progress as { stage?: string; done?: number; total?: number } | undefined;
              return `generation ${g.status}${p ? ` ${p.stage} ${p.done}/${p.total}` : ""}`;
            },
          );
          return waitResult(
            "generation",
            res.record,
            res.record,
            res.timedOut,
            `Call wait_for_generation again with generation "${res.record.id}" and feature "${String(res.record.feature_id)}" to keep waiting.`,
            generationText(res.record),
          );
        } catch (e) {
          return errorResult(e);
        }
      },
    },
  ];
}

/** The feature a generation id belongs to: the feature whose latest generation it is. */
async function featureOfGeneration(exec: Executor, project: string, generation: string, signal: AbortSignal): Promise<string> {
  let cursor: string | undefined;
  for (;;) {
    const page = (await exec.call(ops.listFeatures, { project, limit: 200, ...(cursor ? { cursor } : {}) }, { signal })).json as {
      data: { id: string }[];
      next_cursor: string | null;
    };
    for (const f of page.data) {
      try {
        const g = (await exec.call(ops.getGeneration, { project, feature: f.id }, { signal })).json as { id: string };
        if (g.id === generation) return f.id;
      } catch (e) {
        if (!(e instanceof ClientError && e.status === 404)) throw e;
      }
    }
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  throw new ClientError(404, "not_found", `no feature's latest generation is ${generation}`);
}
