// Protected environments: who may start runs in them, and the hosts their secrets may be sent to.
import type { Kysely } from "kysely";
import type { DB } from "../../db/schema";
import { forbidden } from "../../manifest/errors";
import { canAdminister, type OpContext } from "../context";
import { StringList } from "../shared/columns";
import { readJsonColumnOr } from "../shared/json";
import * as store from "./store";

/** The hosts a protected environment's secrets may go to: its allowed_hosts, else the host of its BASE_URL. */
export function protectedHosts(allowedHosts: string | null, baseUrl: string | undefined): string[] {
  // Damaged, it allows no host: the secrets go nowhere rather than anywhere.
  if (allowedHosts !== null) return readJsonColumnOr(StringList, allowedHosts, []);
  try {
    return baseUrl ? [new URL(baseUrl).hostname] : [];
  } catch {
    return [];
  }
}

/** Runs (single, group, and whatever else queues them) in a protected environment are started by owners and admins. */
export async function assertMayRunIn(ctx: OpContext, trx: Kysely<DB>, environmentIds: (string | null)[]): Promise<void> {
  await assertMayIn(ctx, trx, environmentIds, "start runs in it");
}

/** ... and their runs are cancelled by owners and admins too: a member cannot stop the checks that gate a release. */
export async function assertMayCancelIn(ctx: OpContext, db: Kysely<DB>, environmentIds: (string | null)[]): Promise<void> {
  await assertMayIn(ctx, db, environmentIds, "cancel runs in it");
}

async function assertMayIn(ctx: OpContext, db: Kysely<DB>, environmentIds: (string | null)[], what: string): Promise<void> {
  if (canAdminister(ctx.principal)) return;
  const ids = [...new Set(environmentIds.filter((id) => id !== null))];
  if (ids.length === 0) return;
  const guarded = await store.protectedEnvironmentAmong(db, ids);
  if (guarded !== undefined) throw forbidden(`the environment "${guarded}" is protected: only owners and admins can ${what}`);
}
