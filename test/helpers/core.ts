// A core opened in this process on a fresh data directory and the test backend (SVC_TEST_BACKEND=postgres: a
// database of the test cluster), with the owner of workspace "acme" to call operations as: for tests that drive
// the core and its stores directly, with no server and no engines. `close()` closes it and removes the directory.
import { rmSync } from "node:fs";
import { loadConfig } from "../../config/load";
import { type OpenedCore, openCore } from "../../src/core";
import { createUserInWorkspace } from "../../src/core/access/users";
import type { Principal } from "../../src/core/context";
import { databaseEnv, tempDir } from "./server";

export interface TestCore {
  core: OpenedCore;
  /** The owner of workspace "acme", through an API key. */
  as: Principal;
  close(): Promise<void>;
}

/** `runner.local = false` where only the test may claim runs (a core whose runs something else could take). */
export async function openTestCore(prefix: string, runner: { local?: boolean } = {}): Promise<TestCore> {
  const dataDir = tempDir(prefix);
  const core = await openCore(loadConfig({ env: await databaseEnv(dataDir), flags: { data_dir: dataDir, log_level: "silent", runner } }));
  const owner = await createUserInWorkspace(core.db, { email: "owner@acme.test", name: "owner", workspace: "acme", role: "owner" });
  const as: Principal = { userId: owner.userId, workspaceId: owner.workspaceId, role: "owner", via: "key", keyId: null, trigger: "api" };
  return {
    core,
    as,
    async close() {
      await core.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
