// `svc admin` on a data directory: opens the store for one command (the server may be running or stopped) and
// looks up what the commands name by email and workspace slug.
import type { Db } from "../db/database";
import { openDatabase } from "../db/database";

/** The store handle the core's functions take. */
export type AdminStore = Db;

/** Opens the data directory's store (applying pending migrations), runs `work`, and closes it. */
export async function withDataDir<T>(dataDir: string, busyTimeoutMs: number | undefined, work: (db: Db) => Promise<T>): Promise<T> {
  const opened = await openDatabase(dataDir, { busyTimeoutMs });
  try {
    return await work(opened.db);
  } finally {
    await opened.close();
  }
}

/** Opening a store applies the migrations it lacks (after a restore from an older svc). */
export async function migrateDataDir(dataDir: string): Promise<void> {
  await (await openDatabase(dataDir)).close();
}

/** The workspace named by its slug, or null. */
export async function findWorkspaceBySlug(db: Db, slug: string): Promise<{ id: string } | null> {
  return (await db.selectFrom("workspaces").select("id").where("slug", "=", slug).executeTakeFirst()) ?? null;
}

export async function isMember(db: Db, workspaceId: string, userId: string): Promise<boolean> {
  const member = await db.selectFrom("memberships").select("role").where("workspace_id", "=", workspaceId).where("user_id", "=", userId).executeTakeFirst();
  return member !== undefined;
}
