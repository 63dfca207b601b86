// The delivery side of the outbox: taking due deliveries (one node at a time per delivery, a bounded number per
// channel), and recording each attempt — delivered, or tried again after alerts.retry_first_ms and then doubling
// delays, up to alerts.retry_max_attempts attempts.
import { log } from "../../logging";
import type { Core } from "../context";
import { StringList } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import { openChannelUrl } from "./channel-url";
import { secretPlace } from "./operations";
import * as store from "./store";

export interface DueDelivery {
  id: string;
  event: string;
  /** The exact bytes to send (the same on every attempt). */
  body: string;
  /** Attempts made before this one. */
  attempts: number;
  /** `url` and `secret` in plain text; `urlUnreadable`: the stored URL (a Slack one, sealed) does not open with this
   * server's secrets key, and `secret` is null when the channel's does not. */
  channel: {
    id: string;
    kind: "webhook" | "slack" | "email";
    url: string | null;
    urlUnreadable: boolean;
    secret: string | null;
    emailTo: string[];
  };
  /** The end of this caller's lease on it: its attempt is recorded only while the lease is still its own. */
  leasedUntil: string;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** How many deliveries a caller may take, given the ones it is already sending. */
export interface DeliveryBounds {
  /** The most to take now. */
  limit: number;
  /** The most of one channel's deliveries in flight at once, counting `inFlight`. */
  perChannel: number;
  /** How many of each channel's deliveries (by channel id) the caller is sending now. */
  inFlight: ReadonlyMap<string, number>;
}

/**
 * The deliveries due now, oldest first within the bounds, each leased to this caller for the length of one attempt.
 * Channels already at `perChannel` are left out of the query itself, so a backlog of one channel does not hide the
 * others' deliveries behind it.
 */
export async function takeDueDeliveries(core: Core, now: Date, bounds: DeliveryBounds): Promise<DueDelivery[]> {
  const load = new Map(bounds.inFlight);
  const full = [...load].filter(([, n]) => n >= bounds.perChannel).map(([id]) => id);
  // Wider than the limit: rows of a channel that fills up on the way are passed over, not taken.
  const due = await store.dueDeliveries(core.db, now.toISOString(), Math.max(bounds.limit * 4, 20), full);
  const leaseUntil = new Date(now.getTime() + core.config.alerts.timeout_ms + 5000).toISOString();
  const taken: DueDelivery[] = [];
  for (const d of due) {
    if (taken.length >= bounds.limit) break;
    if ((load.get(d.channel_id) ?? 0) >= bounds.perChannel) continue;
    if (d.next_attempt_at === null || !(await store.leaseDelivery(core.db, d.id, d.next_attempt_at, leaseUntil))) continue;
    load.set(d.channel_id, (load.get(d.channel_id) ?? 0) + 1);
    // Opened here, for this attempt only: the plain URL is never written anywhere.
    const url = openChannelUrl(core.secrets, { id: d.channel_id, url: d.url });
    taken.push({
      id: d.id,
      event: d.event,
      body: d.body,
      attempts: d.attempts,
      channel: {
        id: d.channel_id,
        kind: d.kind,
        url: url.url,
        urlUnreadable: url.unreadable,
        secret: d.secret === null ? null : core.secrets.open(d.secret, secretPlace(d.channel_id)),
        emailTo: d.email_to === null ? [] : readJsonColumnOr(StringList, d.email_to, []),
      },
      leasedUntil: leaseUntil,
    });
  }
  return taken;
}

/** How long after the n-th failed attempt (1-based) the next one is made. */
export function retryDelayMs(core: Core, failedAttempts: number): number {
  return core.config.alerts.retry_first_ms * 2 ** Math.max(0, failedAttempts - 1);
}

export async function recordAttempt(core: Core, d: DueDelivery, result: AttemptResult, at: Date): Promise<void> {
  const attempts = d.attempts + 1;
  const t = at.toISOString();
  const done = result.ok || attempts >= core.config.alerts.retry_max_attempts;
  const recorded = await store.recordAttempt(core.db, d.id, d.leasedUntil, {
    attempts,
    status: result.ok ? "delivered" : done ? "failed" : "pending",
    status_code: result.statusCode,
    error: result.ok ? null : result.error,
    next_attempt_at: done ? null : new Date(at.getTime() + retryDelayMs(core, attempts)).toISOString(),
    delivered_at: result.ok ? t : null,
    updated_at: t,
  });
  // Outlived its lease and taken by another node meanwhile: that attempt's outcome is the one kept.
  if (!recorded) log.warn("an alert attempt outlived its lease; another attempt is recorded instead", { delivery: d.id, attempt: attempts });
}

/** When the next pending delivery is due, if any, leaving out the channels in `skipChannels` (those that cannot take one now). */
export async function soonestDelivery(core: Core, skipChannels: readonly string[] = []): Promise<string | null> {
  return store.soonestDelivery(core.db, skipChannels);
}
