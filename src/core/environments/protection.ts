// Protected environments: who may start runs in them, and the hosts their secrets may be sent to.
import type { Transaction } from "kysely";
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
export async function assertMayRunIn(ctx: OpContext, trx: Transaction<DB>, environmentIds: (string | null)[]): Promise<void> {
  if (canAdminister(ctx.principal)) return;
  const ids = [...new Set(environmentIds.filter((id) => id !== null))];
  if (ids.length === 0) return;
  const guarded = await store.protectedEnvironmentAmong(trx, ids);
  if (guarded !== undefined) throw forbidden(`the environment "${guarded}" is protected: only owners and admins can start runs in it`);
}
