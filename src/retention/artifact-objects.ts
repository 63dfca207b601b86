// The engine that deletes from the `[artifacts.s3]` bucket the objects of artifacts whose rows are gone. Rows go
// with their runs (retention, a deleted run, automation, project or workspace) and a trigger notes each object in
// the same transaction; this engine looks every few seconds, so an object outlives its row by seconds, and a
// bucket that does not answer only delays it (the notes wait in the database, on any node; a failed delete is tried
// again an hour later while the others go on).
import type { OpenedCore } from "../core";
import { deleteRemovedArtifactObjects } from "../core/runs/artifacts";
import { type Engine, serverExtensions } from "../extensions";
import { log } from "../logging";

const LOOK_EVERY_MS = 3_000;
/** After the database failed a look, the next waits this long, so the log is not flooded. */
const AFTER_FAILURE_MS = 60_000;

export function createArtifactObjectsEngine(core: OpenedCore): Engine {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: Promise<void> = Promise.resolve();
  let stopped = false;

  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(look, ms);
  };
  function look(): void {
    timer = null;
    current = deleteRemovedArtifactObjects(core)
      .then((r) => {
        if (r.deleted > 0) log.info("deleted the objects of removed artifacts from the bucket", { objects: r.deleted });
        if (r.failed > 0) log.error("could not delete objects of removed artifacts; each is tried again in an hour", { objects: r.failed, error: r.error });
        schedule(LOOK_EVERY_MS);
      })
      .catch((e: unknown) => {
        // The database, not the bucket (a failed delete is noted for later and the others go on).
        log.error("could not read the artifact objects to delete; trying again in a minute", { error: (e as Error).message });
        schedule(AFTER_FAILURE_MS);
      });
  }

  return {
    name: "artifacts",
    start() {
      if (core.objects) schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}

serverExtensions.engines.push(createArtifactObjectsEngine);
