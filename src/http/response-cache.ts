// Serialized answers of read-only operations, per workspace and URL, kept only while the database has not
// changed since they were computed (see ChangeFeed). A hit skips routing, validation and the handler; the
// key is still verified and the rate limits still apply.
import type { ChangeFeed } from "../core/storage";
import type { Operation } from "../manifest/define";

interface Entry {
  version: string;
  status: number;
  body: string;
  operation: string;
  /** The ETag of a versioned record's answer. */
  etag?: string | null;
}

const MAX_ENTRIES = 2000;
const MAX_BODY_CHARS = 256 * 1024;
/** Only operations that declare it (`cached` in the manifest), and only their JSON answers to GETs. */
export function isCacheable(op: Operation): boolean {
  return op.cached === true && op.method === "GET" && op.response !== null && !("raw" in op.response);
}

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly changes: ChangeFeed) {}

  static key(workspaceId: string, url: string): string {
    const i = url.indexOf("/api/");
    return `${workspaceId} ${i >= 0 ? url.slice(i) : url}`;
  }

  version(): string {
    return this.changes.version();
  }

  get(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.version !== this.changes.version()) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** Stores an answer computed while the database was at `version` (a stale version is simply never hit). */
  set(key: string, entry: Entry): void {
    if (entry.body.length > MAX_BODY_CHARS || entry.version !== this.changes.version()) return;
    if (this.entries.size >= MAX_ENTRIES) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, entry);
  }
}
