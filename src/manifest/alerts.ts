// Operations on alert channels: where svc says that something started failing, recovered or turned flaky, and
// the deliveries it made to each.
import { z } from "zod";
import { defineOperation, Email, ListQuery, Name, page, PathId, ProjectParams, SECRET_MIN_CHARS } from "./define";
import { AlertChannel, AlertChannelKind as ChannelKind, AlertDelivery, AlertEventName } from "./schedule-records";

/** Like environment secrets: a short value is too easy to guess from a signature. */
const Secret = z
  .string()
  .min(SECRET_MIN_CHARS, `a secret needs at least ${SECRET_MIN_CHARS} characters`)
  .max(1000)
  .describe("Webhook only, write-only: the key of the X-Svc-Signature-256 HMAC-SHA256 of the body");
const Url = z.string().trim().min(1).max(2000).describe("webhook and slack: where deliveries are POSTed (http or https)");
const EmailTo = z.array(Email).min(1).max(20).describe("email only: the recipients");
const Events = z.array(AlertEventName).min(1).max(4).describe("The events this channel receives (default: all)");
const RemindEvery = z
  .number()
  .int()
  .min(60)
  .max(30 * 86_400)
  .nullable()
  .describe("While a subject keeps failing, repeat the alert at most this often (seconds); null: once per change");

const ChannelParams = ProjectParams.extend({ channelId: PathId.describe("Alert channel id (ach_…) or exact name") });

export const listAlertChannels = defineOperation({
  name: "list_alert_channels",
  method: "GET",
  path: "/projects/{project}/alert-channels",
  summary: "List a project's alert channels",
  params: ProjectParams,
  query: ListQuery,
  response: page(AlertChannel, "AlertChannelPage"),
  errors: ["not_found"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["alert-channels", "list"] },
});

export const createAlertChannel = defineOperation({
  name: "create_alert_channel",
  method: "POST",
  path: "/projects/{project}/alert-channels",
  summary: "Create an alert channel: a signed webhook, a Slack incoming webhook or email",
  params: ProjectParams,
  body: z.strictObject({
    name: Name.describe("The channel's name (e.g. team-webhook)"),
    kind: ChannelKind.describe("webhook (signed JSON POST), slack (incoming webhook) or email; cannot change later"),
    url: Url.optional(),
    secret: Secret.optional(),
    email_to: EmailTo.optional(),
    events: Events.optional(),
    remind_every: RemindEvery.optional(),
  }),
  response: AlertChannel,
  successStatus: 201,
  errors: ["not_found"],
  versioned: true,
  cli: { words: ["alert-channels", "create"], args: ["name"] },
});

export const getAlertChannel = defineOperation({
  name: "get_alert_channel",
  method: "GET",
  path: "/projects/{project}/alert-channels/{channelId}",
  summary: "Read one alert channel",
  params: ChannelParams,
  response: AlertChannel,
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  versioned: true,
  cli: { words: ["alert-channels", "show"], args: ["channelId"] },
});

export const updateAlertChannel = defineOperation({
  name: "update_alert_channel",
  method: "PATCH",
  path: "/projects/{project}/alert-channels/{channelId}",
  summary: "Update an alert channel (its kind stays)",
  params: ChannelParams,
  body: z.strictObject({
    name: Name.optional().describe("A new name for the channel"),
    url: Url.optional(),
    secret: Secret.optional(),
    email_to: EmailTo.optional(),
    events: Events.optional(),
    remind_every: RemindEvery.optional(),
  }),
  response: AlertChannel,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["alert-channels", "update"], args: ["channelId"] },
});

export const deleteAlertChannel = defineOperation({
  name: "delete_alert_channel",
  method: "DELETE",
  path: "/projects/{project}/alert-channels/{channelId}",
  summary: "Delete an alert channel and its deliveries",
  params: ChannelParams,
  response: null,
  errors: ["not_found", "conflict", "precondition_failed"],
  hints: { destructive: true, idempotent: true },
  versioned: true,
  cli: { words: ["alert-channels", "delete"], args: ["channelId"] },
});

export const testAlertChannel = defineOperation({
  name: "test_alert_channel",
  method: "POST",
  path: "/projects/{project}/alert-channels/{channelId}/test",
  summary: "Send a test event (X-Svc-Event: test) through the channel; answers its delivery",
  params: ChannelParams,
  response: AlertDelivery,
  successStatus: 202,
  errors: ["not_found", "conflict"],
  hints: { openWorld: true },
  cli: { words: ["alert-channels", "test"], args: ["channelId"] },
});

export const listAlertDeliveries = defineOperation({
  name: "list_alert_deliveries",
  method: "GET",
  path: "/projects/{project}/alert-channels/{channelId}/deliveries",
  summary: "List a channel's deliveries, newest first: one per event, with the last attempt's outcome",
  params: ChannelParams,
  query: ListQuery,
  response: page(AlertDelivery, "AlertDeliveryPage"),
  errors: ["not_found", "conflict"],
  hints: { readOnly: true, idempotent: true },
  cli: { words: ["alert-channels", "deliveries"], args: ["channelId"] },
});
