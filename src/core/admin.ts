// `svc admin` on a data directory: opens the core for one command (the server may be running or stopped), finds
// what the commands name by email, workspace slug or key id, and says whom an operation is called as.
import { EventEmitter } from "node:events";
import type { Config } from "../../config/schema";
import { existsSync } from "node:fs";
import { CopyError, copySqliteIntoPostgres, type TableCount, tablesInDependencyOrder, whyNotEmpty } from "../db/copy";
import { DatabaseOpenError, databasePath, openDatabase, redactedUrl } from "../db/database";
import { migrations } from "../db/migrations";
import { appliedSqliteMigrations } from "../db/sqlite";
import { dataDirHolder } from "../data-dir-lock";
import { secretsKeyPath } from "../security/secret-box";
import { moveDiskArtifactsIn } from "./runs/artifacts";
import { AppError } from "../manifest/errors";
import type { SecretBox } from "../security/secret-box";
import * as accessStore from "./access/store";
import { KeyVerifier } from "./auth/verifier";
import type { Core, CoreEvents, Principal, Role } from "./context";
import { StateWaits } from "./waits";
import { artifactObjects } from "./runs/artifact-objects";

/** The SQLite database file the configuration names when it does not exist yet, else null (also on PostgreSQL). */
export function missingSqliteDatabase(config: Config): string | null {
  if (config.database.url) return null;
  const path = databasePath(config.data_dir);
  return existsSync(path) ? null : path;
}

/**
 * On SQLite, a command of a newer svc must not migrate the database under the svc serve running on it: that older
 * server would go on with a schema it does not know (the upgrade order is the server first, see docs/operations.md).
 * Read before anything is opened for writing.
 */
function refuseMigratingUnderServer(config: Config): void {
  if (config.database.url) return;
  const pid = dataDirHolder(config.data_dir);
  const file = databasePath(config.data_dir);
  if (pid === null || !existsSync(file)) return;
  const applied = new Set(appliedSqliteMigrations(file));
  if (applied.size === 0) return;
  const pending = Object.keys(migrations).filter((name) => !applied.has(name));
  if (pending.length > 0)
    throw new DatabaseOpenError(
      `svc serve (pid ${pid}) runs an older svc on ${config.data_dir}, whose database lacks this version's migrations (${pending.join(", ")}): restart the server with this version first, then run this command`,
    );
}

/**
 * Opens the data directory's store (applying pending migrations) as a core, runs `work`, and closes it. The
 * secrets key is not opened: no administration command reads environment secrets, and a command must not fail
 * (or create a key file) because of where the server keeps its key.
 */
export async function withAdminCore<T>(config: Config, work: (core: Core) => Promise<T>): Promise<T> {
  refuseMigratingUnderServer(config);
  const opened = await openDatabase(config.data_dir, { busyTimeoutMs: config.busy_timeout_ms, url: config.database.url });
  const keys = new KeyVerifier(opened.db, opened.changes);
  const events = new EventEmitter<CoreEvents>();
  const waits = new StateWaits(events, opened.changes);
  const core: Core = {
    db: opened.db,
    queue: opened.queue,
    changes: opened.changes,
    probe: opened.probe,
    config,
    events,
    keys,
    waits,
    // Deleting what holds artifacts notes their objects (a trigger); the server's artifacts engine deletes them.
    objects: artifactObjects(config),
    get secrets(): SecretBox {
      throw new AppError("internal_error", "svc admin does not open environment secrets");
    },
  };
  try {
    return await work(core);
  } finally {
    waits.close();
    await keys.stop();
    await opened.close();
  }
}

export { CopyError };

export interface MigrateToPostgresResult {
  counts: TableCount[];
  /** The source installation's secrets key: the PostgreSQL nodes need this very key to read the copied secrets. */
  secretsKey: string;
  artifactsMovedIn: number;
}

/**
 * `svc admin migrate-to-postgres`: copies the SQLite installation in `fromDir` (brought to this version's
 * migrations first, its artifacts still on disk moved into it, as `svc serve` would) into the empty PostgreSQL
 * database at `url`, in one transaction verified by counts per table. A database holding anything (a table that
 * is not svc's, or a row in one of svc's) is refused before anything is created in it.
 */
export async function migrateToPostgres(
  fromDir: string,
  url: string,
  opts: { busyTimeoutMs: number; secretsKeyFile?: string; onTable?: (c: TableCount) => void },
): Promise<MigrateToPostgresResult> {
  if (!existsSync(databasePath(fromDir)))
    throw new CopyError(`no SQLite database at ${databasePath(fromDir)}: --from names the data directory of the installation`);
  const source = await openDatabase(fromDir, { busyTimeoutMs: opts.busyTimeoutMs });
  try {
    const sqlite = source.sqlite;
    if (!sqlite) throw new CopyError(`${fromDir} is not an SQLite installation`);
    const artifactsMovedIn = await moveDiskArtifactsIn(source.db, fromDir);
    // The driver's errors name neither the database nor, for an unreadable URL, what is wrong with it.
    const filled = await whyNotEmpty(url, tablesInDependencyOrder(sqlite)).catch((e: unknown) => {
      const unreadable = e instanceof TypeError ? " (percent-encode any of / ? # @ : % in the user name or password)" : "";
      throw new CopyError(`cannot open the PostgreSQL database ${redactedUrl(url)}: ${(e as Error).message}${unreadable}`);
    });
    if (filled.length > 0)
      throw new CopyError(`the PostgreSQL database ${redactedUrl(url)} is not empty (it holds ${filled.join(", ")}); give an empty database`);
    const target = await openDatabase(fromDir, { url });
    try {
      const counts = await copySqliteIntoPostgres(sqlite, target.db, opts.onTable);
      return { counts, secretsKey: secretsKeyPath(fromDir, opts.secretsKeyFile), artifactsMovedIn };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Opening a store applies the migrations it lacks (after a restore from an older svc). */
export async function migrateDataDir(dataDir: string): Promise<void> {
  await (await openDatabase(dataDir)).close();
}

/** The user named by email and the workspace named by slug, with the user's role there (null: not a member); null when either does not exist. */
export async function findMembership(
  core: Core,
  email: string,
  workspaceSlug: string,
): Promise<{ userId: string; workspaceId: string; role: Role | null } | null> {
  const user = await accessStore.findUserByEmail(core.db, email.trim().toLowerCase());
  const ws = await accessStore.findWorkspaceBySlug(core.db, workspaceSlug);
  if (!user || !ws) return null;
  const member = await accessStore.findMembership(core.db, ws.id, user.id);
  return { userId: user.id, workspaceId: ws.id, role: member?.role ?? null };
}

/** The operator acting on a user's behalf: operations answer as they would to that user (their keys are theirs). */
export function onBehalfOf(user: { userId: string; workspaceId: string; role: Role | null }): Principal {
  // A user whose membership ended still owns their keys; no rule the operator reaches by this depends on the role.
  return { userId: user.userId, workspaceId: user.workspaceId, role: user.role ?? "member", via: "operator", keyId: null, trigger: "cli" };
}

/** Stands for the operator, not any user: never written where a user id is kept. */
export const OPERATOR_USER_ID = "usr_operator";

/** The operator with an owner's rights in a workspace (the rules that keep a workspace an owner still hold). */
export function operatorIn(workspaceId: string): Principal {
  return { userId: OPERATOR_USER_ID, workspaceId, role: "owner", via: "operator", keyId: null, trigger: "cli" };
}

/** Whoever holds the key, in the key's workspace, or null when there is no such key. */
export async function keyHolder(core: Core, keyId: string): Promise<Principal | null> {
  const key = await accessStore.findKey(core.db, keyId);
  if (!key) return null;
  const member = await accessStore.findMembership(core.db, key.workspace_id, key.user_id);
  return onBehalfOf({ userId: key.user_id, workspaceId: key.workspace_id, role: member?.role ?? null });
}
