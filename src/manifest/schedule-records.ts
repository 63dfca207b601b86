// The records schedules and alert channels answer (their operations are in schedules.ts and alerts.ts).
import { z } from "zod";
import { NullableTimestamp, Timestamp } from "./define";

export const AlertEventName = z.enum(["failing", "recovered", "flaky", "schedule_failed"]);
export const AlertChannelKind = z.enum(["webhook", "slack", "email"]);

export const ScheduleTarget = z
  .object({
    automation: z.string().optional().describe("Automation id"),
    group: z.string().optional().describe("Group id"),
    tags: z.array(z.string()).optional(),
  })
  .meta({ id: "ScheduleTarget" });

export const ScheduleFire = z
  .object({
    due_at: Timestamp.describe("The due time"),
    fired_at: Timestamp.describe("When the scheduler took it"),
    outcome: z
      .enum(["started", "skipped", "failed"])
      .describe("started: it started its run or group run; skipped: the schedule's previous run or group run had not ended; failed: it could start nothing"),
    reason: z.string().nullable().describe("skipped or failed: why; started: null"),
    run_id: z.string().nullable().describe("The run it started (an automation target), else null"),
    group_run_id: z.string().nullable().describe("The group run it started (a group or tags target), else null"),
  })
  .meta({ id: "ScheduleFire" });

export const Schedule = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    target: ScheduleTarget,
    environment_id: z.string().nullable().describe("The environment its runs use; null: each automation's own"),
    cron: z.string().nullable(),
    timezone: z.string().nullable(),
    interval_seconds: z.number().int().nullable(),
    enabled: z.boolean(),
    next_run_at: NullableTimestamp.describe("When it is next due; null while disabled"),
    next_runs_at: z.array(Timestamp).describe("The next few due times (up to 5); empty while disabled"),
    last_fired_at: NullableTimestamp,
    last_error: z
      .string()
      .nullable()
      .describe("Why the last due time that tried to start runs started nothing (target gone, not allowed), else null; a skipped due time leaves it"),
    last_fire: ScheduleFire.nullable().describe("What its latest due time did (started, skipped and why, failed and why); null: never due yet"),
    key: z.string().nullable().describe("Its identity within the project when svc apply made it (the document's key or path), else null"),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "Schedule" });

export const AlertChannel = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    kind: AlertChannelKind,
    url: z
      .string()
      .nullable()
      .describe(
        "webhook: where deliveries are POSTed; slack: only its origin followed by … (an incoming-webhook URL is a secret: it is never shown, and sending this value back keeps it)",
      ),
    has_secret: z.boolean().describe("A secret is set (it is never shown)"),
    email_to: z.array(z.string()).nullable(),
    events: z.array(AlertEventName),
    remind_every: z.number().int().nullable(),
    key: z.string().nullable().describe("Its identity within the project when svc apply made it (the document's key or path), else null"),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: "AlertChannel" });

export const AlertDelivery = z
  .object({
    delivery_id: z.string().describe("Sent as X-Svc-Delivery; the same on every attempt"),
    channel_id: z.string(),
    event: z.string().describe("failing, recovered, flaky, schedule_failed, or test"),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.number().int(),
    status_code: z.number().int().nullable().describe("The HTTP status of the last attempt (webhook, slack), else null"),
    error: z.string().nullable().describe("What went wrong in the last attempt, else null"),
    next_attempt_at: NullableTimestamp.describe("When a pending delivery is tried next; null once delivered or failed"),
    delivered_at: NullableTimestamp,
    created_at: Timestamp,
  })
  .meta({ id: "AlertDelivery" });

const TARGET_KINDS = ["automation", "group", "tags"] as const;
/**
 * A schedule target naming two kinds is told so before its union reads it: each alternative would refuse the
 * other's key, and the caller would read "unknown field" about a field that exists (create/update_schedule, and a
 * schedule document of `svc apply`).
 */
export function targetKindsProblem(value: unknown): string | null {
  if (typeof value === "object" && value !== null && TARGET_KINDS.filter((k) => Object.hasOwn(value, k)).length > 1)
    return "give exactly one of automation, group or tags";
  return null;
}
