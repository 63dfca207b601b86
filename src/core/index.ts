// Builds the core: the database, the key verifier and the event channel the engines listen on.
import { EventEmitter } from "node:events";
import type { Config } from "../../config/schema";
import type { Database } from "bun:sqlite";
import { openDatabase } from "../db/database";
import { KeyVerifier } from "./auth/verifier";
import { openSecretsKey } from "./environments/secrets";
import type { Core, CoreEvents } from "./context";
import { StateWaits } from "./waits";
import { ArtifactStoreError, artifactObjects } from "./runs/artifact-objects";

export interface OpenedCore extends Core {
  /** SQLite's raw connection (absent on PostgreSQL), for tests that set up or break the file directly; operations use `db` and `queue`. */
  sqlite?: Database;
  /** What the thread checkpointing the SQLite log has done (svc serve on SQLite), for tests. */
  checkpoints?: { checkpoints: number; frames: number };
  close(): Promise<void>;
}

/** `serving`: the core of svc serve (its SQLite log is checkpointed by a thread of its own). */
export async function openCore(config: Config, opts: { serving?: boolean } = {}): Promise<OpenedCore> {
  const opened = await openDatabase(config.data_dir, {
    busyTimeoutMs: config.busy_timeout_ms,
    url: config.database.url,
    backgroundCheckpoints: opts.serving === true,
  });
  const secrets = await openSecretsKey(opened.db, config).catch(async (e: unknown) => {
    await opened.close();
    throw e;
  });
  const objects = artifactObjects(config);
  if (objects && opts.serving) {
    // A bucket that is missing or refuses the credentials is said at start, not with the first lost screenshot.
    await objects.probe().catch(async (e: unknown) => {
      await opened.close();
      throw new ArtifactStoreError(`artifacts.s3 (SVC_ARTIFACTS_S3_*): the bucket refused a test write: ${(e as Error).message}`);
    });
  }
  const keys = new KeyVerifier(opened.db, opened.changes);
  const events = new EventEmitter<CoreEvents>();
  events.setMaxListeners(100);
  const waits = new StateWaits(events, opened.changes);
  return {
    db: opened.db,
    sqlite: opened.sqlite,
    checkpoints: opened.checkpoints?.stats,
    queue: opened.queue,
    changes: opened.changes,
    probe: opened.probe,
    buckets: opened.buckets,
    config,
    events,
    keys,
    secrets,
    waits,
    objects,
    async close() {
      waits.close();
      await keys.stop();
      await opened.close();
    },
  };
}
