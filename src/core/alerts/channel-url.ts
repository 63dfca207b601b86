// A Slack channel's incoming-webhook URL at rest: it lets anyone post to the channel, so it is sealed with the
// secrets key like a webhook's `secret` (a copy of the database or a backup alone does not reveal it), and opened
// only to deliver and to show its origin.
import type { Selectable } from "kysely";
import type { AlertChannelTable } from "../../db/schema";
import { log } from "../../logging";
import { SEALED_PREFIX, type SecretBox } from "../../security/secret-box";
import type { Core } from "../context";
import { erasingReplacedValues } from "../environments/store";
import * as store from "./store";

type ChannelRow = Selectable<AlertChannelTable>;

/** Where a channel's URL is sealed: bound to the channel (and apart from its `secret`), so it opens nowhere else. */
export const urlPlace = (channelId: string) => `alert-channel-url:${channelId}`;

/** Whether a kind's URL is a secret (a webhook's URL is not: its bodies are signed with the channel's `secret`). */
const urlIsSecret = (kind: ChannelRow["kind"]) => kind === "slack";

/** The stored form of a channel's URL: a Slack URL sealed, any other as given. */
export function storedChannelUrl(box: SecretBox, c: { id: string; kind: ChannelRow["kind"]; url: string | null }): string | null {
  return c.url !== null && urlIsSecret(c.kind) ? box.seal(c.url, urlPlace(c.id)) : c.url;
}

/** Whether a stored URL is sealed. A plain one is an absolute http(s) URL (checked when saved), never `v1.…`. */
const isSealed = (url: string) => url.startsWith(SEALED_PREFIX);

/** A channel's URL as stored: `url` in plain text, or null with `unreadable` when it does not open with this key. */
export interface OpenedUrl {
  url: string | null;
  unreadable: boolean;
}

/**
 * The channel's URL in plain text. A row written before Slack URLs were sealed holds it plain and is read as is
 * (and sealed when next written, or at the next start). A sealed URL that does not open — another server's key, or
 * moved from another channel — is `unreadable`.
 */
export function openChannelUrl(box: SecretBox, row: Pick<ChannelRow, "id" | "url">): OpenedUrl {
  if (row.url === null || !isSealed(row.url)) return { url: row.url, unreadable: false };
  const url = box.open(row.url, urlPlace(row.id));
  return url === null ? { url: null, unreadable: true } : { url, unreadable: false };
}

/**
 * At start (the delivery engine's): seals the Slack URLs still stored in plain text (written before they were
 * sealed), so an upgraded server does not keep them readable in the database and its backups until each channel
 * happens to be edited. Safe to run on every node at once: a row is sealed only while it still holds the plain URL
 * read, and its version (`updated_at`) is left alone — what the API shows of it does not change. On SQLite the
 * replaced plain text is erased from the file's free space and the write-ahead log, as for environment secrets.
 */
export async function sealPlainSlackUrls(core: Core): Promise<number> {
  const plain = (await store.slackChannelUrls(core.db)).filter((r): r is { id: string; url: string } => r.url !== null && !isSealed(r.url));
  if (plain.length === 0) return 0;
  let sealed = 0;
  await erasingReplacedValues(core.db, async () => {
    for (const r of plain) if (await store.replaceChannelUrl(core.db, r.id, r.url, core.secrets.seal(r.url, urlPlace(r.id)))) sealed++;
  });
  log.info("encrypted the Slack webhook URLs of alert channels stored before they were encrypted", { channels: sealed });
  return sealed;
}
