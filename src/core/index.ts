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
import { log } from "../logging";

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
    // A bucket that is missing or refuses the credentials is said at start, not with the first lost screenshot; one
    // that does not answer (down for a while) does not keep the API down: screenshots wait for it.
    const problem = await objects.probe().then(
      () => null,
      (e: unknown) => e as Error,
    );
    if (problem instanceof ArtifactStoreError && problem.refused) {
      await opened.close();
      throw new ArtifactStoreError(`artifacts.s3 (SVC_ARTIFACTS_S3_*): the bucket refused a test write: ${problem.message}`, true);
    }
    if (problem) log.error("the artifacts bucket did not answer a test write: screenshots cannot be kept until it does", { error: problem.message });
    if (!config.artifacts.s3.session_token && config.artifacts.s3.access_key_id && (process.env.AWS_SESSION_TOKEN || process.env.S3_SESSION_TOKEN))
      log.warn(
        "the environment's AWS_SESSION_TOKEN (or S3_SESSION_TOKEN) is sent with the configured artifacts.s3 keys: unset it if they are not temporary credentials",
      );
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
