// What every core operation receives: the services of the running core and the principal acting.
import { EventEmitter } from "node:events";
import type { Config } from "../../config/schema";
import type { Db } from "../db/database";
import type { SecretBox } from "../security/secret-box";
import type { KeyVerifier } from "./auth/verifier";
import type { ChangeFeed, RunQueueStore, StorageProbe } from "./storage";

export type Role = "owner" | "admin" | "member";
export type Trigger = "api" | "cli" | "mcp" | "web";

export interface Principal {
  userId: string;
  workspaceId: string;
  role: Role;
  /** How the principal was established: an API key, a web session, or the operator running `svc admin` on the data directory. */
  via: "key" | "session" | "operator";
  keyId: string | null;
  trigger: Trigger;
}

/** Signals the core raises for the engines that run inside `svc serve`. */
export interface CoreEvents {
  runQueued: [];
  runCancelled: [runId: string];
  generationQueued: [];
  generationCancelled: [generationId: string];
}

export interface Core {
  db: Db;
  /** The hot run-queue statements of the storage dialect; everything else goes through `db` (Kysely). */
  queue: RunQueueStore;
  /** Tells whether the database may have changed since a given moment (for in-memory read caches). */
  changes: ChangeFeed;
  /** What readiness asks of the store. */
  probe: StorageProbe;
  config: Config;
  events: EventEmitter<CoreEvents>;
  keys: KeyVerifier;
  /** Seals and opens environment secrets (the key outside the database). */
  secrets: SecretBox;
}

export interface OpContext {
  core: Core;
  principal: Principal;
  /** The address people reach this server at (for links handed out, such as password-setup links). */
  publicUrl(): string;
}

export function canAdminister(p: Principal): boolean {
  return p.role === "owner" || p.role === "admin";
}
