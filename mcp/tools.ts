// One MCP tool per manifest operation: snake_case arguments naming the thing (an id or the exact name), a title,
// the summary, hints as annotations, an output schema, and a compact result (see results.ts). Arguments are
// checked by svc's own schemas (the same messages as REST), never by the MCP library first.
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { ClientError, mcpIsErrorFor } from "../src/client/errors";
import { objectShape } from "../src/client/schema-fields";
import { type Operation, operations } from "../src/manifest/index";
import type { Executor } from "./executor";
import { compactAnswer, includeChoices, outputSchemaFor, tidy } from "./results";
import { toolsetOf } from "./toolsets";

export interface ToolContext {
  executor: Executor;
  /** `svc mcp --project P`: used when a tool call leaves `project` out. */
  defaultProject: string | null;
}

export interface ToolExtra {
  _meta?: { progressToken?: string | number };
  signal: AbortSignal;
  sendNotification: (n: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
}

/** A tool as listed, and how it is called. */
export interface ToolDef {
  tool: Tool;
  toolset: string;
  readOnly: boolean;
  call(args: Record<string, unknown>, extra: ToolExtra): Promise<CallToolResult>;
}

/** Path parameters as tool arguments: the thing they name, not its id (`automationId` → `automation`). */
const PARAM_ARGS: Record<string, string> = { userId: "member", keyId: "key" };
export function argName(param: string): string {
  return PARAM_ARGS[param] ?? param.replace(/Id$/, "").replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

const THING: Record<string, string> = {
  project: "Project: its id (prj_…) or slug",
  feature: "Feature: its id (fea_…) or exact name",
  automation: "Automation: its id (aut_…) or exact name",
  run: "Run id (run_…)",
  group: "Group: its id (grp_…) or exact name",
  group_run: "Group run id (grn_…)",
  environment: "Environment: its id (env_…) or exact name",
  member: "Member: their user id (usr_…) or email address",
  key: "API key id (key_…)",
  invitation: "Invitation id (inv_…)",
  name: "Artifact name, as the run lists it",
};

const IF_MATCH =
  "The record's `etag` as a tool result gave it (get_…, create_…, update_…): the change is made only if nobody changed the record since; else 412 precondition_failed, and you read it again";

export const IdempotencyKey = z
  .string()
  .min(1)
  .max(255)
  .describe("Any unique string for this start (e.g. a UUID): calling again with the same key returns the first start instead of starting again");

/** The JSON Schema of a field as a tool argument (its input side), without the draft marker. */
export function argumentSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  return tidy(rest, false);
}

/**
 * The steps argument by its outline: the whole step format (a third of the tool list) is the resource
 * svc://schema/automation, and svc checks every step with the messages REST gives.
 */
const STEPS_SCHEMAS = new WeakMap<z.ZodType, z.ZodType>();
function stepsArgument(schema: z.ZodType): z.ZodType {
  const known = STEPS_SCHEMAS.get(schema);
  if (known) return known;
  const optional = schema.safeParse(undefined).success;
  const outline = z
    .array(z.record(z.string(), z.unknown()))
    .min(1)
    .max(500)
    .describe(
      `${schema.description ?? "The steps"}. Each step is an object: e.g. {"request": {"method": "GET", "url": "/items/1"}, "expect": ["[STATUS] == 200"]} or {"goto": "/login"}, {"fill": {"locator": "label=Email", "value": "{{EMAIL}}"}}, {"click": "role=button[name=\\"Sign in\\"]"}, {"expect": {"text": "Welcome"}}. The full format: resource svc://schema/automation (JSON Schema) and svc://docs/automations`,
    );
  const arg = optional ? outline.optional() : outline;
  STEPS_SCHEMAS.set(schema, arg);
  return arg;
}

/** The arguments of an operation's tool: path parameters (renamed), query, body and header fields, `include`, `idempotency_key`. */
export function toolArguments(op: Operation, defaultProject: string | null): { shape: Record<string, z.ZodType>; fieldOf: Map<string, string> } {
  const shape: Record<string, z.ZodType> = {};
  const fieldOf = new Map<string, string>();
  const add = (arg: string, field: string, schema: z.ZodType) => {
    if (arg in shape) throw new Error(`${op.name}: argument "${arg}" appears twice in its input`);
    shape[arg] = schema;
    fieldOf.set(arg, field);
  };
  for (const [name, schema] of Object.entries(objectShape(op.params))) {
    const arg = argName(name);
    let s = schema.describe(THING[arg] ?? schema.description ?? arg);
    if (arg === "project" && defaultProject) s = s.optional().describe(`${THING.project}; default "${defaultProject}"`);
    add(arg, name, s);
  }
  // Headers as fields too: `if_match` is the If-Match of a versioned change, which a tool result's `etag` gives.
  for (const part of [op.query, op.body, op.headers])
    for (const [name, schema] of Object.entries(objectShape(part)))
      add(name, name, name === "steps" ? stepsArgument(schema) : name === "if_match" ? schema.describe(IF_MATCH) : schema);
  const include = includeChoices(op);
  if (include.length > 0) {
    add(
      "include",
      "",
      z
        .array(z.enum(include as [string, ...string[]]))
        .optional()
        .describe(`Parts left out of the result unless asked for: ${include.map((i) => `"${i}"`).join(", ")}`),
    );
  }
  if (op.startsWork) add("idempotency_key", "", IdempotencyKey.optional());
  return { shape, fieldOf };
}

export function inputSchemaOf(shape: Record<string, z.ZodType>): Tool["inputSchema"] {
  const schema = argumentSchema(z.object(shape)) as Tool["inputSchema"];
  return { ...schema, additionalProperties: false };
}

/** The error as a tool result: isError (from the manifest's table), the message and details as text, the error as structured content. */
export function errorResult(e: unknown): CallToolResult {
  const err = e instanceof ClientError ? e : new ClientError(0, "internal_error", (e as Error)?.message ?? String(e));
  const body = err.toJSON();
  return {
    isError: mcpIsErrorFor(err),
    content: [{ type: "text", text: `${err.error}: ${err.message}${(err.details ?? []).map((d) => `\n  ${d.path}: ${d.message}`).join("")}` }],
    structuredContent: body,
  };
}

/** An argument the tool does not take, refused as REST refuses an unknown field. */
function unknownArguments(args: Record<string, unknown>, shape: Record<string, z.ZodType>): ClientError | null {
  const extra = Object.keys(args).filter((k) => !(k in shape));
  if (extra.length === 0) return null;
  return new ClientError(
    400,
    "invalid_request",
    `unknown argument${extra.length > 1 ? "s" : ""} ${extra.map((k) => `"${k}"`).join(", ")}; this tool takes ${Object.keys(shape).join(", ")}`,
    extra.map((k) => ({ path: k, message: "unknown argument" })),
  );
}

/** What a path argument takes, as its schema says ("Run id (run_…)", "Runner id (rnr_…) or exact name"). */
function takes(op: Operation, field: string | undefined): string {
  const described = field === undefined ? undefined : objectShape(op.params)[field]?.description;
  return described ? described.charAt(0).toLowerCase() + described.slice(1) : "an id";
}

/** What a value is, in a refusal: "number", "null", "array". */
const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/**
 * A required path parameter left out, or given as something else than a string: named, instead of a "not found"
 * for an empty path segment.
 */
function missingArguments(op: Operation, args: Record<string, unknown>, fieldOf: Map<string, string>): ClientError | null {
  const params = new Set(Object.keys(objectShape(op.params)));
  const named = [...fieldOf].filter(([, field]) => params.has(field)).map(([arg]) => arg);
  const wrong = named.filter((k) => args[k] !== undefined && typeof args[k] !== "string");
  if (wrong.length > 0)
    return new ClientError(
      400,
      "invalid_request",
      wrong.map((k) => `"${k}" must be a string (${takes(op, fieldOf.get(k))}), not ${kindOf(args[k])}`).join("; "),
      wrong.map((k) => ({ path: k, message: `expected string, received ${kindOf(args[k])}` })),
    );
  const missing = named.filter((k) => args[k] === undefined || args[k] === "");
  if (missing.length === 0) return null;
  return new ClientError(
    400,
    "invalid_request",
    `missing ${missing.map((k) => `"${k}"`).join(", ")}`,
    missing.map((k) => ({ path: k, message: `required (${takes(op, fieldOf.get(k))})` })),
  );
}

/** The arguments only tools take (`include`, `idempotency_key`), checked by their own schemas: never silently dropped. */
function toolArgumentProblems(args: Record<string, unknown>, shape: Record<string, z.ZodType>): ClientError | null {
  for (const name of ["include", "idempotency_key"]) {
    const schema = shape[name];
    if (!schema || args[name] === undefined) continue;
    const parsed = schema.safeParse(args[name]);
    if (parsed.success) continue;
    const issue = parsed.error.issues[0];
    const path = [name, ...(issue?.path ?? [])].join(".");
    const message = issue?.message ?? "invalid";
    return new ClientError(400, "invalid_request", `${path}: ${message}`, [{ path, message }]);
  }
  return null;
}

interface Listed {
  tool: Tool;
  shape: Record<string, z.ZodType>;
  fieldOf: Map<string, string>;
}
/** Converting the schemas costs more than answering a call: each tool is listed once per default project. */
const listed = new Map<string, Listed>();

function listedTool(op: Operation, defaultProject: string | null): Listed {
  const cacheKey = `${op.name}\u0000${defaultProject ?? ""}`;
  const known = listed.get(cacheKey);
  if (known) return known;
  const { shape, fieldOf } = toolArguments(op, defaultProject);
  const outputSchema = outputSchemaFor(op);
  const tool: Tool = {
    name: op.name,
    title: titleOf(op.name),
    description: op.description ? `${op.summary}. ${op.description}` : op.summary,
    inputSchema: inputSchemaOf(shape),
    ...(outputSchema ? { outputSchema } : {}),
    annotations: {
      readOnlyHint: op.hints.readOnly ?? false,
      destructiveHint: op.hints.destructive ?? false,
      idempotentHint: op.hints.idempotent ?? false,
      openWorldHint: reachesOutside(op),
    },
  };
  const entry = { tool, shape, fieldOf };
  listed.set(cacheKey, entry);
  return entry;
}

export function operationTool(op: Operation, ctx: ToolContext): ToolDef {
  const { tool, shape, fieldOf } = listedTool(op, ctx.defaultProject);
  const readOnly = op.hints.readOnly ?? false;
  return {
    tool,
    toolset: toolsetOf(op),
    readOnly,
    async call(rawArgs) {
      try {
        const args = { ...rawArgs };
        if (args.project === undefined && ctx.defaultProject && fieldOf.get("project") === "project") args.project = ctx.defaultProject;
        const refused = unknownArguments(args, shape) ?? missingArguments(op, args, fieldOf) ?? toolArgumentProblems(args, shape);
        if (refused) throw refused;
        const input: Record<string, unknown> = {};
        for (const [arg, v] of Object.entries(args)) {
          const field = fieldOf.get(arg);
          if (field) input[field] = v;
        }
        const include = new Set(Array.isArray(args.include) ? (args.include as string[]) : []);
        const key = typeof args.idempotency_key === "string" ? args.idempotency_key : undefined;
        const answer = await ctx.executor.call(op, input, { idempotencyKey: key });
        return compactAnswer(op, answer, include);
      } catch (e) {
        return errorResult(e);
      }
    },
  };
}

/** A short title from the tool's name: "Update environment" (the description says the rest). */
export function titleOf(name: string): string {
  const words = name.replaceAll("_", " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Runs and generation reach the systems under test (and an LLM), as do a channel's test and the assistant: open world. Everything else stays inside svc. */
export function reachesOutside(op: Operation): boolean {
  return op.startsWork === true || op.hints.openWorld === true;
}

export function operationTools(ctx: ToolContext): ToolDef[] {
  return operations.filter((op) => !op.sessionOnly).map((op) => operationTool(op, ctx));
}
