// Builds the core: the database, the key verifier and the event channel the engines listen on.
import { EventEmitter } from "node:events";
import type { Config } from "../../config/schema";
import type { Database } from "bun:sqlite";
import { openDatabase } from "../db/database";
import { KeyVerifier } from "./auth/verifier";
import { openSecretsKey } from "./environments/secrets";
import type { Core, CoreEvents } from "./context";
import { StateWaits } from "./waits";

export interface OpenedCore extends Core {
  /** SQLite's raw connection (absent on PostgreSQL), for tests that set up or break the file directly; operations use `db` and `queue`. */
  sqlite?: Database;
  close(): Promise<void>;
}

export async function openCore(config: Config): Promise<OpenedCore> {
  const opened = await openDatabase(config.data_dir, { busyTimeoutMs: config.busy_timeout_ms, url: config.database.url });
  const secrets = await openSecretsKey(opened.db, config).catch(async (e: unknown) => {
    await opened.close();
    throw e;
  });
  const keys = new KeyVerifier(opened.db, opened.changes);
  const events = new EventEmitter<CoreEvents>();
  events.setMaxListeners(100);
  const waits = new StateWaits(events, opened.changes);
  return {
    db: opened.db,
    sqlite: opened.sqlite,
    queue: opened.queue,
    changes: opened.changes,
    probe: opened.probe,
    buckets: opened.buckets,
    config,
    events,
    keys,
    secrets,
    waits,
    async close() {
      waits.close();
      await keys.stop();
      await opened.close();
    },
  };
}
