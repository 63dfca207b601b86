// What every core operation receives: the services of the running core and the principal acting.
import type { EventEmitter } from "node:events";
import type { z } from "zod";
import type { Config } from "../../config/schema";
import type { ArtifactObjects } from "./runs/artifact-objects";
import type { Role as RoleEnum, RunTrigger } from "../manifest/records";
import type { Db } from "../db/database";
import type { SecretBox } from "../security/secret-box";
import type { KeyVerifier } from "./auth/verifier";
import type { ChangeFeed, RunQueueStore, SharedBuckets, StorageProbe } from "./storage";
import type { StateWaits } from "./waits";

export type Role = z.infer<typeof RoleEnum>;
export type Trigger = z.infer<typeof RunTrigger>;

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
  /** Runs that reached a final status (written). */
  runsFinished: [runIds: string[]];
  /** Runs finished (or ended by recovery): their roll-ups are written; retention checks its limits. */
  runsEnded: [runIds: string[]];
  generationQueued: [];
  generationCancelled: [generationId: string];
  /** A generation that succeeded or failed (written). */
  generationFinished: [generationId: string];
  /** Alert deliveries were written to the outbox. */
  alertsQueued: [];
  /** A schedule was created or changed: its next due time may be sooner than the scheduler expects. */
  schedulesChanged: [];
  /** The server is shutting down: long waits answer now and no new work is handed out (runner claims, leases). */
  closing: [];
}

export interface Core {
  db: Db;
  /** The hot run-queue statements of the storage dialect; everything else goes through `db` (Kysely). */
  queue: RunQueueStore;
  /** Tells whether the database may have changed since a given moment (for in-memory read caches). */
  changes: ChangeFeed;
  /** What readiness asks of the store. */
  probe: StorageProbe;
  /** Request budgets every node shares (PostgreSQL); absent: kept in this process's memory (one SQLite node). */
  buckets?: SharedBuckets;
  config: Config;
  events: EventEmitter<CoreEvents>;
  keys: KeyVerifier;
  /** Seals and opens environment secrets (the key outside the database). */
  secrets: SecretBox;
  /** Reads that wait for a run, group run or generation to end (`?wait=N`). */
  waits: StateWaits;
  /** The S3-compatible bucket run artifacts are kept in (`[artifacts.s3]`); null: in the database. */
  objects: ArtifactObjects | null;
}

export interface OpContext {
  core: Core;
  principal: Principal;
  /** The address people reach this server at (for links handed out, such as password-setup links). */
  publicUrl(): string;
  /** Aborted when the caller goes away (a long-poll then stops waiting). */
  signal?: AbortSignal;
  /** The request's Idempotency-Key, on an operation that honours it (see core/idempotency.ts). */
  idempotency?: IdempotentStart;
  /** The request's If-Match, on an operation that changes one versioned record (see core/versions.ts). */
  ifMatch?: string;
  /**
   * Set when the caller reads the answer as an event stream (an operation with a `stream` in the manifest, asked
   * with Accept: text/event-stream): sends one of the operation's declared events at once. The first one starts
   * the stream, so a refusal thrown before it is still an ordinary error answer.
   */
  emit?: (event: string, data: unknown) => void;
  /**
   * Set by a handler whose answer depends on more than the database (the clock: whether a runner was heard from
   * within a lease): the answer is not kept in the response cache, which only notices database changes.
   */
  uncacheable?: boolean;
}

/** A start under an Idempotency-Key: its answer is kept in the same transaction as its work. */
export interface IdempotentStart {
  /** The operation and the resource it acts on (`idempotencyScope`). */
  scope: string;
  key: string;
  /** The status the operation answers a start with. */
  status: number;
  /** Set when the key already had an answer (kept by a request that committed first): that answer is the response. */
  replayed: { status: number; body: string } | null;
}

export function canAdminister(p: Principal): boolean {
  return p.role === "owner" || p.role === "admin";
}
