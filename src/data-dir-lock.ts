// One `svc serve` per SQLite data directory: a second one would share the file and, as it starts, end the first's
// running runs as "interrupted by server restart" while they still execute. The first notes its process id in
// DATA_DIR/serve.pid (created exclusively); a note whose process no longer runs as `svc serve` is stale and taken over.
import { openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import { svcProcessAlive } from "./process-alive";

export class DataDirInUse extends Error {}

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
    let other = Number.NaN;
    try {
      other = Number(readFileSync(file, "utf8").trim());
    } catch {
      // removed meanwhile: try again
    }
    // This very process (a server stopped without letting go, started again) may take it back.
    if (Number.isInteger(other) && other > 0 && other !== process.pid && svcProcessAlive(other, "serve"))
      throw new DataDirInUse(
        `another svc serve (pid ${other}) is using the data directory ${dataDir}: stop it first, or give this server a data directory of its own (--data-dir)`,
      );
    rmSync(file, { force: true });
  }
  throw new DataDirInUse(`cannot take the data directory ${dataDir}: another svc serve is starting on it`);
}
