// Verifies API keys on the hot path: an in-memory cache of key hashes, invalidated on any change to keys or
// memberships (in this process directly, from other processes through SQLite's data_version, which the HTTP
// layer refreshes at the start of every request).
import type { ChangeFeed } from "../storage";
import type { Db } from "../../db/database";
import { hashApiKey, isWellFormedApiKey, sameDigest } from "../../security/api-keys";
import type { Role } from "../context";
import { nowIso } from "../shared/time";
import * as store from "./store";

export interface VerifiedKey {
  keyId: string;
  userId: string;
  workspaceId: string;
  role: Role;
  hash: string;
  expiresAt: string | null;
}

const MAX_CACHED = 50_000;
const LAST_USED_FLUSH_MS = 15_000;

export class KeyVerifier {
  private cache = new Map<string, VerifiedKey | null>();
  private seenVersion: number;
  /** Key id → last use (epoch ms); formatted only when written or listed. */
  private pendingLastUsed = new Map<string, number>();
  private flushTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly db: Db,
    private readonly changes: ChangeFeed,
  ) {
    this.seenVersion = changes.externalVersion();
  }

  /** Call after any change to keys, memberships or users made through this process. */
  invalidate(): void {
    this.cache.clear();
  }

  /** The key's identity, or null when it is malformed, unknown, revoked, expired or its user left. */
  async verify(key: string): Promise<VerifiedKey | null> {
    const known = this.verifyCached(key);
    if (known !== undefined) return known;
    const hash = hashApiKey(key);
    const found = await this.lookup(hash);
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(hash, found);
    return this.accept(found, hash);
  }

  /** Like verify, without touching the database: undefined when the answer is not in the cache. */
  verifyCached(key: string): VerifiedKey | null | undefined {
    if (!isWellFormedApiKey(key)) return null;
    const version = this.changes.externalVersion();
    if (version !== this.seenVersion) {
      this.seenVersion = version;
      this.cache.clear();
    }
    const hash = hashApiKey(key);
    const found = this.cache.get(hash);
    return found === undefined ? undefined : this.accept(found, hash);
  }

  private accept(found: VerifiedKey | null, hash: string): VerifiedKey | null {
    if (!found || !sameDigest(found.hash, hash)) return null;
    if (found.expiresAt !== null && found.expiresAt <= nowIso()) return null;
    this.pendingLastUsed.set(found.keyId, Date.now());
    return found;
  }

  private async lookup(hash: string): Promise<VerifiedKey | null> {
    const row = await store.findLiveKeyByHash(this.db, hash);
    if (!row) return null;
    return { keyId: row.id, userId: row.user_id, workspaceId: row.workspace_id, role: row.role, hash: row.hash, expiresAt: row.expires_at };
  }

  /** Last-used times not yet written, so listings show them before the next flush. */
  pendingLastUsedAt(keyId: string): string | undefined {
    const at = this.pendingLastUsed.get(keyId);
    return at === undefined ? undefined : new Date(at).toISOString();
  }

  /** Writes last-used times in one transaction instead of one write per request. */
  async flushLastUsed(): Promise<void> {
    if (this.pendingLastUsed.size === 0) return;
    const batch = this.pendingLastUsed;
    this.pendingLastUsed = new Map();
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of batch) await store.setKeyLastUsed(trx, id, new Date(at).toISOString());
    });
  }

  startFlushing(): void {
    this.flushTimer ??= setInterval(() => void this.flushLastUsed().catch(() => {}), LAST_USED_FLUSH_MS);
    this.flushTimer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = null;
    await this.flushLastUsed();
  }
}
