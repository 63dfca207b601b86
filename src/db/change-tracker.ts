// Knows when the database may have changed: a counter bumped by every write this process sends through
// Kysely, combined with SQLite's data_version (which moves when ANOTHER connection commits). In-memory read
// caches compare it to decide whether what they hold is still true.
import type { Database } from "bun:sqlite";
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from "kysely";

const READ_KINDS = new Set(["SelectQueryNode"]);

export class ChangeTracker implements KyselyPlugin {
  private writes = 0;
  private external = 0;
  private refreshedAt = Number.NEGATIVE_INFINITY;
  private readonly dataVersion: { get(): unknown };

  constructor(sqlite: Database) {
    this.dataVersion = sqlite.query("PRAGMA data_version");
    this.refreshExternal();
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    // Anything that is not a plain SELECT (inserts, updates, deletes, raw SQL, schema changes) counts as a write.
    if (!READ_KINDS.has(args.node.kind)) this.writes++;
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  /** Bump by hand after writes that bypass Kysely. */
  noteWrite(): void {
    this.writes++;
  }

  /** Reads SQLite's data_version once; called at the start of each request rather than at every check. */
  refreshExternal(): number {
    this.external = (this.dataVersion.get() as { data_version: number }).data_version;
    this.refreshedAt = performance.now();
    return this.external;
  }

  /**
   * Refreshes unless the last refresh is younger than `maxAgeMs`. The HTTP layer calls it per request with
   * 1 ms: reading data_version costs ~2 µs, a third of a cached read, and a commit by another process (`svc
   * admin`, a restore) becomes visible at most 1 ms late. Writes of this process are seen at once either way.
   */
  refreshExternalIfOlderThan(maxAgeMs: number): void {
    if (performance.now() - this.refreshedAt >= maxAgeMs) this.refreshExternal();
  }

  /** What other connections have committed, as of the last refresh. */
  externalVersion(): number {
    return this.external;
  }

  /** Changes whenever the database may have changed, in this process or (as of the last refresh) another. */
  version(): string {
    return `${this.writes}:${this.external}`;
  }
}
