// What a change the model asks for becomes before it is held for the person's confirmation: its arguments checked
// with the operation's schemas, the things they name resolved to ids (and, for a change of one record, that
// record's ETag as if_match), and the refusals known up front decided. So a held action is one that can run, and
// it runs on the records it was proposed for: renamed or changed in between, it fails clearly instead of reaching
// another record or overwriting someone's later edit.
import { objectShape, splitInput } from "../../client/schema-fields";
import { keyOfOperation, type Operation, ops } from "../../manifest";
import { AppError, invalid, zodDetails } from "../../manifest/errors";
import { argName, toolArguments } from "../../../mcp/tools";
import { assertMayManageChannels } from "../alerts/operations";
import type { OpContext } from "../context";
import { assertMayChangeEnvironment, findEnvironment } from "../environments/operations";
import { assertMayRunIn } from "../environments/protection";
import * as automations from "../automations/store";
import { inProcessCall } from "../in-process";
import { parseBody, parseQuery } from "../input";
import type { OperationKey } from "../registry";
import { tagOfAnswer } from "../versions";

type Args = Record<string, unknown>;

/** Why the action is not held: refused (the person may not take it) or failed (it could not run as asked). */
export interface NotHeld {
  status: "refused" | "failed";
  error: { status: number; error: string; message: string; details?: { path: string; message: string }[] };
}

/** The operation answering GET at exactly `path` with one record (JSON), by path. */
const readerOf = new Map<string, Operation>(
  Object.values(ops as Record<string, Operation>)
    .filter((op) => op.method === "GET" && op.response !== null && !("raw" in op.response) && !op.sessionOnly)
    .map((op) => [op.path, op]),
);

/** The input as REST would receive it, checked with the operation's schemas: the same codes and messages. */
function checkInput(op: Operation, args: Args): Args {
  const { shape, fieldOf } = toolArguments(op, null);
  const unknown = Object.keys(args).filter((k) => !(k in shape));
  if (unknown.length > 0) {
    throw invalid(
      `unknown argument${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `"${k}"`).join(", ")}; this tool takes ${Object.keys(shape).join(", ")}`,
      unknown.map((k) => ({ path: k, message: "unknown argument" })),
    );
  }
  for (const name of ["include", "idempotency_key"]) {
    const schema = shape[name];
    if (!schema || args[name] === undefined) continue;
    const parsed = schema.safeParse(args[name]);
    if (!parsed.success) throw invalid(`${name} is not valid`, zodDetails(parsed.error, name));
  }
  const input: Args = {};
  for (const [arg, v] of Object.entries(args)) {
    const field = fieldOf.get(arg);
    if (field) input[field] = v;
  }
  const missing = Object.keys(objectShape(op.params)).filter((p) => typeof input[p] !== "string" || input[p] === "");
  if (missing.length > 0) {
    throw invalid(
      `missing ${missing.map((p) => `"${argName(p)}"`).join(", ")} (a string)`,
      missing.map((p) => ({ path: argName(p), message: "required" })),
    );
  }
  const { query, body } = splitInput(op, input);
  parseQuery(op, query);
  return (parseBody(op, body) ?? {}) as Args;
}

/**
 * Each path parameter resolved to the id of the record it names now, read as the person (their rights, their
 * workspace): a name that names nothing fails at once. Answers the records read, by parameter.
 */
async function resolvePath(ctx: OpContext, op: Operation, args: Args): Promise<Map<string, Args>> {
  const records = new Map<string, Args>();
  const resolved: Record<string, string> = {};
  for (const param of Object.keys(objectShape(op.params))) {
    const at = op.path.indexOf(`{${param}}`);
    const reader = at < 0 ? undefined : readerOf.get(op.path.slice(0, at + param.length + 2));
    const key = reader ? (keyOfOperation.get(reader) as OperationKey | undefined) : undefined;
    const arg = argName(param);
    resolved[param] = String(args[arg]);
    if (!reader || !key) continue;
    const answer = await inProcessCall()(ctx.core, ctx.principal, key, { params: { ...resolved } });
    if (typeof answer !== "object" || answer === null) continue;
    const record = answer as Args;
    records.set(param, record);
    if (typeof record.id === "string") {
      resolved[param] = record.id;
      args[arg] = record.id;
    }
  }
  return records;
}

/** The operations that start runs in the environment their `environment` names (else each automation's own). */
const STARTS_RUNS = new Set<Operation>([ops.runAutomation, ops.runGroup, ops.runFeature, ops.runSelection, ops.testDocuments]);

/** Changes of alert channels, which only owners and admins make (a member may list, read and test them). */
const CHANGES_CHANNELS = new Set<Operation>([ops.createAlertChannel, ops.updateAlertChannel, ops.deleteAlertChannel]);

/**
 * The refusals that can be known before the action runs, by the core's own checks: alert channels are set, a
 * protected environment is changed, and runs are started in it, only by owners and admins.
 */
async function assertMayTake(ctx: OpContext, op: Operation, args: Args, body: Args, records: Map<string, Args>): Promise<void> {
  if (CHANGES_CHANNELS.has(op)) assertMayManageChannels(ctx);
  const projectId = records.get("project")?.id;
  // The body was checked with the operation's schema: these are its protection fields, as the handler reads them.
  const protection = { protected: body.protected as boolean | undefined, allowed_hosts: body.allowed_hosts as string[] | null | undefined };
  if (op === ops.createEnvironment) assertMayChangeEnvironment(ctx, null, protection);
  if ((op === ops.updateEnvironment || op === ops.deleteEnvironment) && typeof projectId === "string") {
    const env = await findEnvironment(ctx, projectId, String(args.environment));
    if (env) assertMayChangeEnvironment(ctx, env, op === ops.updateEnvironment ? protection : {});
  }
  // Starting runs: in the environment named, whichever operation starts them (a feature's, a selection's, test
  // documents'), else in an automation's or a group's own.
  if (STARTS_RUNS.has(op) && typeof projectId === "string") {
    const environmentArg = typeof args.environment === "string" ? args.environment : undefined;
    // The environment asked for, else the automation's own.
    const asked = environmentArg === undefined ? undefined : await findEnvironment(ctx, projectId, environmentArg);
    if (environmentArg !== undefined && !asked) throw new AppError("not_found", `environment "${environmentArg}" not found`);
    if (asked) args.environment = asked.id;
    const own = records.get("automationId")?.environment_id;
    // A group's automations run in their own environments unless one is asked for: each is checked, as the run does.
    const members = records.get("groupId")?.automation_ids;
    const memberEnvironments =
      asked === undefined && Array.isArray(members)
        ? (
            await automations.automationsAmong(
              ctx.core.db,
              projectId,
              members.filter((m): m is string => typeof m === "string"),
            )
          ).map((a) => a.environment_id)
        : [];
    await assertMayRunIn(ctx, ctx.core.db, [asked?.id ?? (typeof own === "string" ? own : null), ...memberEnvironments]);
  }
}

/**
 * The arguments a held action keeps (names resolved to ids, if_match captured), or why it is not held. `ctx`
 * carries the assistant's principal: the person's rights.
 */
export async function prepareHeld(ctx: OpContext, op: Operation, given: Args): Promise<{ held: Args } | { notHeld: NotHeld }> {
  const args = { ...given };
  try {
    const body = checkInput(op, args);
    const records = await resolvePath(ctx, op, args);
    // A change of one versioned record applies to the version the person was shown, unless the model named one.
    const changed = [...records.values()].at(-1);
    if (op.headers && "if_match" in objectShape(op.headers) && args.if_match === undefined && changed) {
      const tag = tagOfAnswer(changed);
      if (tag !== null) args.if_match = tag;
    }
    await assertMayTake(ctx, op, args, body, records);
    return { held: args };
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    const error = { status: e.status, error: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
    return { notHeld: { status: e.code === "forbidden" ? "refused" : "failed", error } };
  }
}
