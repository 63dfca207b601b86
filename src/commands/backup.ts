// `svc admin backup` and `svc admin restore`: the core's backup and restore (src/core/backup.ts), with its
// refusals as usage errors (exit code 2, one line on stderr).
import * as core from "../core/backup";
import { UsageError } from "../../cli/usage";

export type { BackupResult, RestoreResult } from "../core/backup";

function asUsageError<T>(work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (e instanceof core.BackupError) throw new UsageError(e.message);
    throw e;
  }
}

export function backupDataDir(dataDir: string, outFile: string, busyTimeoutMs: number): core.BackupResult {
  return asUsageError(() => core.backupDataDir(dataDir, outFile, busyTimeoutMs));
}

export function restoreDataDir(fromFile: string, dataDir: string, force: boolean): core.RestoreResult {
  return asUsageError(() => core.restoreDataDir(fromFile, dataDir, force));
}
