// Alert channels: where alerts go (a signed webhook, Slack, email), the events each wants, and its deliveries.
import type { Selectable } from "kysely";
import type { AlertChannelTable, AlertDeliveryTable } from "../../db/schema";
import type { ops } from "../../manifest";
import { type ErrorDetail, forbidden, invalid } from "../../manifest/errors";
import { requestUrlProblem } from "../../manifest/request-urls";
import { newId } from "../../security/ids";
import type { SecretBox } from "../../security/secret-box";
import { canAdminister, type OpContext } from "../context";
import type { Handler } from "../handler";
import { resolveAlertChannel, resolveProject } from "../scope";
import { StringList } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import { fetchPage } from "../shared/pagination";
import { nowIso } from "../shared/time";
import { type OpenedUrl, openChannelUrl, storedChannelUrl } from "./channel-url";
import { ALERT_EVENTS, AlertRecorder } from "./state";
import { expectVersion, nextStamp, staleVersion } from "../versions";
import * as store from "./store";

type O = typeof ops;
type ChannelRow = Selectable<AlertChannelTable>;

/** Where a channel's secret is sealed: bound to the channel, so a sealed value cannot be moved to another. */
export const secretPlace = (channelId: string) => `alert-channel:${channelId}`;

/**
 * A Slack incoming-webhook URL is the secret that lets anyone post to the channel: it is shown as its origin and
 * `/…` only (`…` when it does not open with this server's key). Sent back as shown (an edit form, `show --json` →
 * `update --file`), it keeps the URL it stands for.
 */
export function shownUrl(kind: ChannelRow["kind"], stored: OpenedUrl): string | null {
  if (kind !== "slack") return stored.url;
  if (stored.unreadable) return "…";
  if (stored.url === null) return null;
  try {
    return `${new URL(stored.url).origin}/…`;
  } catch {
    return "…";
  }
}

export function toChannel(box: SecretBox, row: ChannelRow) {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    kind: row.kind,
    url: shownUrl(row.kind, openChannelUrl(box, row)),
    has_secret: row.secret !== null,
    email_to: row.email_to === null ? null : readJsonColumnOr(StringList, row.email_to, []),
    events: readJsonColumnOr(StringList, row.events, [...ALERT_EVENTS]) as (typeof ALERT_EVENTS)[number][],
    remind_every: row.remind_every,
    key: row.key,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toDelivery(row: Selectable<AlertDeliveryTable>) {
  return {
    delivery_id: row.id,
    channel_id: row.channel_id,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    status_code: row.status_code,
    error: row.error,
    next_attempt_at: row.status === "pending" ? row.next_attempt_at : null,
    delivered_at: row.delivered_at,
    created_at: row.created_at,
  };
}

function urlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not an absolute URL (give http://… or https://…)";
  }
  return requestUrlProblem(parsed);
}

/**
 * What each kind needs, checked on the channel as it would be saved; every problem is named by its field.
 * `keptUnreadableUrl`: the url is the stored one, which does not open with this server's key (checked when it was
 * saved; its deliveries fail saying so until a new url is given).
 */
export function checkChannel(
  ctx: OpContext,
  c: { kind: ChannelRow["kind"]; url: string | null; hasSecret: boolean; emailTo: string[] | null; keptUnreadableUrl?: boolean },
): void {
  const details: ErrorDetail[] = [];
  if ((c.kind === "webhook" || c.kind === "slack") && c.keptUnreadableUrl === true) {
    if (c.emailTo !== null) details.push({ path: "email_to", message: `only email channels have recipients` });
  } else if (c.kind === "webhook" || c.kind === "slack") {
    if (c.url === null) details.push({ path: "url", message: `a ${c.kind} channel needs a url` });
    else {
      const problem = urlProblem(c.url);
      if (problem) details.push({ path: "url", message: problem });
    }
    if (c.emailTo !== null) details.push({ path: "email_to", message: `only email channels have recipients` });
  }
  if (c.kind === "webhook" && !c.hasSecret)
    details.push({ path: "secret", message: "a webhook channel needs a secret (at least 8 characters) to sign its bodies" });
  if (c.kind !== "webhook" && c.hasSecret) details.push({ path: "secret", message: "only webhook channels are signed with a secret" });
  if (c.kind === "email") {
    if (c.emailTo === null) details.push({ path: "email_to", message: "an email channel needs recipients" });
    if (c.url !== null) details.push({ path: "url", message: "email channels have no url" });
    if (!ctx.core.config.alerts.smtp.host)
      details.push({ path: "kind", message: "email alerts need an SMTP server in the server's configuration ([alerts.smtp] host)" });
  }
  if (details.length > 0) throw invalid(details.map((d) => `${d.path}: ${d.message}`).join("; "), details);
}

export const uniqueEvents = (events: string[] | undefined) => (events ? JSON.stringify([...new Set(events)]) : JSON.stringify(ALERT_EVENTS));

/**
 * Where a project's alerts go is the owners' and admins' to set: a member who could change a channel's URL would
 * silently take the team's alerts (signed with its secret) elsewhere, and one who could delete it, its paging. A
 * member sees the channels and their deliveries, and may send a test.
 */
export function assertMayManageChannels(ctx: OpContext): void {
  if (!canAdminister(ctx.principal))
    throw forbidden("alert channels are set by the workspace's owners and admins: a member may list them, read their deliveries and send a test");
}

export const listAlertChannels: Handler<O["listAlertChannels"]> = async (ctx, { params, query }) => {
  const project = await resolveProject(ctx, params.project);
  return fetchPage(store.channelsQuery(ctx.core.db, project.id), "alert_channels", query, (row) => toChannel(ctx.core.secrets, row));
};

export const createAlertChannel: Handler<O["createAlertChannel"]> = async (ctx, { params, body }) => {
  const project = await resolveProject(ctx, params.project);
  assertMayManageChannels(ctx);
  const url = body.url ?? null;
  checkChannel(ctx, { kind: body.kind, url, hasSecret: body.secret !== undefined, emailTo: body.email_to ?? null });
  const id = newId("ach");
  const t = nowIso();
  const row: ChannelRow = {
    id,
    project_id: project.id,
    name: body.name,
    kind: body.kind,
    url: storedChannelUrl(ctx.core.secrets, { id, kind: body.kind, url }),
    secret: body.secret === undefined ? null : ctx.core.secrets.seal(body.secret, secretPlace(id)),
    email_to: body.email_to ? JSON.stringify(body.email_to) : null,
    events: uniqueEvents(body.events),
    remind_every: body.remind_every ?? null,
    key: null,
    created_at: t,
    updated_at: t,
  };
  await store.insertChannel(ctx.core.db, row);
  return toChannel(ctx.core.secrets, row);
};

export const getAlertChannel: Handler<O["getAlertChannel"]> = async (ctx, { params }) =>
  toChannel(ctx.core.secrets, (await resolveAlertChannel(ctx, params.project, params.channelId)).channel);

export const updateAlertChannel: Handler<O["updateAlertChannel"]> = async (ctx, { params, body }) => {
  const { channel } = await resolveAlertChannel(ctx, params.project, params.channelId);
  assertMayManageChannels(ctx);
  const expected = expectVersion(ctx, channel, "alert channel");
  const stored = openChannelUrl(ctx.core.secrets, channel);
  const keepUrl = body.url === undefined || body.url === shownUrl(channel.kind, stored);
  // The URL in plain text, to check; written sealed (a Slack URL stored plain before URLs were sealed is sealed now).
  const url = keepUrl ? stored.url : body.url;
  const keptUnreadableUrl = keepUrl && stored.unreadable;
  const next: ChannelRow = {
    ...channel,
    name: body.name ?? channel.name,
    url: keptUnreadableUrl ? channel.url : storedChannelUrl(ctx.core.secrets, { id: channel.id, kind: channel.kind, url: url ?? null }),
    secret: body.secret === undefined ? channel.secret : ctx.core.secrets.seal(body.secret, secretPlace(channel.id)),
    email_to: body.email_to ? JSON.stringify(body.email_to) : channel.email_to,
    events: body.events ? uniqueEvents(body.events) : channel.events,
    remind_every: body.remind_every === undefined ? channel.remind_every : body.remind_every,
    updated_at: nextStamp(channel.updated_at),
  };
  checkChannel(ctx, {
    kind: next.kind,
    url: url ?? null,
    hasSecret: next.secret !== null,
    emailTo: next.email_to === null ? null : readJsonColumnOr(StringList, next.email_to, []),
    keptUnreadableUrl,
  });
  if (!(await store.updateChannel(ctx.core.db, channel.id, next, expected))) throw staleVersion("alert channel", channel);
  return toChannel(ctx.core.secrets, next);
};

export const deleteAlertChannel: Handler<O["deleteAlertChannel"]> = async (ctx, { params }) => {
  const { channel } = await resolveAlertChannel(ctx, params.project, params.channelId);
  assertMayManageChannels(ctx);
  const expected = expectVersion(ctx, channel, "alert channel");
  if (!(await store.deleteChannel(ctx.core.db, channel.id, expected)) && expected !== undefined) throw staleVersion("alert channel", channel);
};

export const testAlertChannel: Handler<O["testAlertChannel"]> = async (ctx, { params }) => {
  const { channel } = await resolveAlertChannel(ctx, params.project, params.channelId);
  const t = nowIso();
  const id = await ctx.core.db.transaction().execute((trx) => new AlertRecorder(ctx.core, trx, t).queue(channel, null, "test", null, null, null));
  ctx.core.events.emit("alertsQueued");
  const row = await store.findDelivery(ctx.core.db, id);
  if (!row) throw new Error(`delivery ${id} vanished`);
  return toDelivery(row);
};

export const listAlertDeliveries: Handler<O["listAlertDeliveries"]> = async (ctx, { params, query }) => {
  const { channel } = await resolveAlertChannel(ctx, params.project, params.channelId);
  return fetchPage(store.deliveriesQuery(ctx.core.db, channel.id), "alert_deliveries", query, toDelivery);
};
