// Where a run's artifacts (screenshots and other files) live on disk: written by the engine, served by
// get_run_artifact, removed with their project.
import { join } from "node:path";

export function artifactDir(dataDir: string, runId: string): string {
  return join(dataDir, "artifacts", runId);
}
