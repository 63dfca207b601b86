// How long a key revoked through one node takes to be refused by another: two `svc serve` nodes (in this process)
// on one PostgreSQL database, where the other node learns of the revocation by LISTEN/NOTIFY. Each round creates a
// key on node A's store, uses it on node B (so B has it cached), revokes it on A, and asks B back to back until it answers
// 401: the delay is from A's answer to the revocation to B's first 401. Prints every round and the median.
// Usage: bun bench/nodes-revocation.ts [--rounds 20]   (SVC_DATABASE_URL: an empty database to use; else a throw-away cluster)
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { createApiKey, createUserInWorkspace } from "../src/core/access/users";
import { type RunningServer, startServer } from "../src/server";
import { freshDatabaseUrl } from "../test/helpers/postgres";
import { tempDir } from "../test/helpers/server";
import { flag } from "./args";

/** Gives up on a round after this long: a revocation that never arrives is reported as such, not waited on. */
const ROUND_LIMIT_MS = 10_000;

export interface RevocationFigures {
  delaysMs: number[];
  medianMs: number;
  /** Answers node B still gave with the revoked key after node A had answered the revocation, all rounds together. */
  staleAnswers: number;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** Two nodes on the database at `url` sharing one secrets key; `rounds` revocations on A timed until B refuses. */
export async function measureRevocations(url: string, rounds: number): Promise<RevocationFigures> {
  const dirs = [tempDir("svc-bench-node-a-"), tempDir("svc-bench-node-b-")];
  const flags = (dir: string) => ({
    port: 0,
    data_dir: dir,
    log_level: "error",
    "database.url": url,
    "rate_limit.enabled": false,
    "secrets.key_file": join(dirs[0] as string, "secrets.key"),
  });
  const nodes: RunningServer[] = [];
  try {
    nodes.push(await startServer(loadConfig({ env: {}, flags: flags(dirs[0] as string) })));
    nodes.push(await startServer(loadConfig({ env: {}, flags: flags(dirs[1] as string) })));
    const [a, b] = nodes as [RunningServer, RunningServer];
    const owner = await createUserInWorkspace(a.core.db, {
      email: "bench@acme.test",
      name: "bench",
      workspace: "acme",
      role: "owner",
      password: "correct horse battery",
    });
    const ownerKey = (await createApiKey(a.core.db, { userId: owner.userId, workspaceId: owner.workspaceId, name: "bench", expiresAt: null })).key;
    const onB = (key: string) => fetch(`${b.url}/api/v1/ops/projects`, { headers: { authorization: `Bearer ${key}` } });
    const delaysMs: number[] = [];
    let staleAnswers = 0;
    for (let i = 0; i < rounds; i++) {
      const { id, key } = await createApiKey(a.core.db, { userId: owner.userId, workspaceId: owner.workspaceId, name: `round ${i}`, expiresAt: null });
      // Node B learns of the new key (and caches it).
      for (const until = Date.now() + ROUND_LIMIT_MS; ; ) {
        const r = await onB(key);
        await r.arrayBuffer();
        if (r.status === 200) break;
        if (Date.now() > until) throw new Error(`node B never accepted the new key (last answer ${r.status})`);
      }
      const revoked = await fetch(`${a.url}/api/v1/ops/keys/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${ownerKey}` } });
      const t0 = performance.now();
      if (revoked.status !== 204) throw new Error(`revoking on node A answered ${revoked.status}`);
      for (;;) {
        const r = await onB(key);
        await r.arrayBuffer();
        if (r.status === 401) break;
        staleAnswers++;
        if (performance.now() - t0 > ROUND_LIMIT_MS) throw new Error(`node B still accepted a revoked key after ${ROUND_LIMIT_MS} ms`);
      }
      delaysMs.push(performance.now() - t0);
    }
    return { delaysMs, medianMs: median(delaysMs), staleAnswers };
  } finally {
    for (const n of nodes.reverse()) await n.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const rounds = flag("rounds", 20);
  const url = process.env.SVC_DATABASE_URL ?? (await freshDatabaseUrl());
  const { delaysMs, medianMs, staleAnswers } = await measureRevocations(url, rounds);
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  console.log(`key revocation, node A → node B (PostgreSQL LISTEN/NOTIFY), ${rounds} rounds`);
  console.log(`rounds: ${delaysMs.map(ms).join(", ")}`);
  console.log(`median: ${ms(medianMs)}  min: ${ms(Math.min(...delaysMs))}  max: ${ms(Math.max(...delaysMs))}`);
  console.log(`answers node B still gave with a revoked key, after node A's answer: ${staleAnswers} in ${rounds} rounds`);
  process.exit(0);
}
