// One `svc serve` per SQLite data directory: a second one would share the file and, as it starts, end the first's
// running runs as "interrupted by server restart" while they still execute. The first notes its process id in
// DATA_DIR/serve.pid (created exclusively); a note whose process no longer runs as `svc serve` is stale and taken over.
import { openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { svcProcessAlive } from "./process-alive";

export class DataDirInUse extends Error {}

/** The process id of the svc serve that holds the data directory now, or null when none does. */
export function dataDirHolder(dataDir: string): number | null {
  let pid = Number.NaN;
  try {
    pid = Number(readFileSync(join(dataDir, "serve.pid"), "utf8").trim());
  } catch {
    return null;
  }
  return Number.isInteger(pid) && pid > 0 && pid !== process.pid && svcProcessAlive(pid, "serve") ? pid : null;
}

/** Holds the data directory for this process; returns what lets it go. Throws DataDirInUse when another svc serve holds it. */
export function holdDataDir(dataDir: string): () => void {
  const file = join(dataDir, "serve.pid");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, "utf8").trim() === String(process.pid)) rmSync(file, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    // This very process (a server stopped without letting go, started again) may take it back.
    const other = dataDirHolder(dataDir);
    if (other !== null)
      throw new DataDirInUse(
        `another svc serve (pid ${other}) is using the data directory ${dataDir}: stop it first, or give this server a data directory of its own (--data-dir)`,
      );
    rmSync(file, { force: true });
  }
  throw new DataDirInUse(`cannot take the data directory ${dataDir}: another svc serve is starting on it`);
}
