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
    last_error: z.string().nullable().describe("Why the last due time started nothing (target gone, not allowed), else null"),
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
