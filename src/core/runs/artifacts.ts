// A run's artifacts (screenshots and other files): kept in the database with their run (table run_artifacts), so
// every node serves them and backups, retention and project deletion take them with the run; or, with
// `[artifacts.s3]`, as objects in a bucket that the rows name (see artifact-objects.ts). Before 0016 they
// lived on one node's disk under DATA_DIR/artifacts/<run>/; those files are moved into the database at start.
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { log } from "../../logging";
import type { Db } from "../../db/database";
import { AppError, invalid } from "../../manifest/errors";
import type { Core } from "../context";
import * as store from "./artifacts-store";

/** Where a run's artifacts lived on disk before they moved into the database (files left there are moved in at start). */
export function artifactDir(dataDir: string, runId: string): string {
  return join(dataDir, "artifacts", runId);
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const SCREENSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,195}\.png$/;

/**
 * Runs make screenshots, nothing else: what a worker or a runner hands in is kept only if it is one (a .png name
 * and PNG bytes). Anything else served from svc's origin could be a page with a script in the viewer's session.
 */
export function screenshotProblem(name: string, bytes: Uint8Array): string | null {
  if (!SCREENSHOT_NAME.test(name) || name.includes("..")) return `"${name}" is not a screenshot's name (letters, digits, '.', '_', '-', ending .png)`;
  if (bytes.byteLength < PNG_SIGNATURE.length || PNG_SIGNATURE.some((b, i) => bytes[i] !== b)) return `${name} is not a PNG image`;
  return null;
}

/**
 * Keeps a screenshot of a run (replacing one of the same name); anything else is refused. With `[artifacts.s3]` the
 * bytes go to the bucket first and the row names the object: a row never points at an object that was not written.
 */
export async function saveRunArtifact(core: Core, runId: string, name: string, bytes: Uint8Array): Promise<void> {
  const problem = screenshotProblem(name, bytes);
  if (problem) throw invalid(`a run keeps screenshots only: ${problem}`, [{ path: "file", message: problem }]);
  const at = new Date().toISOString();
  if (!core.objects) {
    await store.putArtifact(core.db, { runId, name, bytes, size: bytes.byteLength, objectKey: null }, at);
    return;
  }
  const objectKey = core.objects.keyOf(runId, name);
  await core.objects.put(objectKey, bytes);
  try {
    await store.putArtifact(core.db, { runId, name, bytes: new Uint8Array(0), size: bytes.byteLength, objectKey }, at);
  } catch (e) {
    // The run is gone meanwhile (deleted with its project, say): its object would be nobody's.
    await core.objects.delete(objectKey).catch(() => undefined);
    throw e;
  }
}

/** An artifact's bytes, from the row or from the bucket; undefined when there is none (or its object is gone). */
export async function readRunArtifact(core: Core, runId: string, name: string): Promise<Uint8Array | undefined> {
  const row = await store.readArtifact(core.db, runId, name);
  if (!row) return undefined;
  if (row.object_key === null) return row.bytes;
  if (!core.objects) throw new AppError("unavailable", "this artifact is kept in an S3 bucket, and this server has no [artifacts.s3] bucket configured");
  try {
    return await core.objects.get(row.object_key);
  } catch (e) {
    log.error("could not read an artifact from the bucket", { run_id: runId, name, error: (e as Error).message });
    throw new AppError("unavailable", "the artifact's bucket did not answer: try again later");
  }
}

/**
 * Deletes from the bucket the objects of artifact rows that are gone (retention, deleted runs, projects, workspaces:
 * a trigger noted them as the rows went), `batch` at a time; answers how many. Without a bucket, nothing is done.
 */
export async function deleteRemovedArtifactObjects(core: Core, batch = 100): Promise<number> {
  const objects = core.objects;
  if (!objects) return 0;
  let deleted = 0;
  for (;;) {
    const keys = await store.pendingObjectDeletions(core.db, batch);
    if (keys.length === 0) return deleted;
    const done: string[] = [];
    let failure: Error | null = null;
    for (const key of keys) {
      try {
        await objects.delete(key);
        done.push(key);
      } catch (e) {
        failure = e as Error;
        break;
      }
    }
    await store.forgetObjectDeletions(core.db, done);
    deleted += done.length;
    if (failure) throw failure;
    if (keys.length < batch) return deleted;
  }
}

/**
 * Moves the artifacts left on this node's disk by an earlier version (or restored from an older backup's
 * FILE.artifacts/) into the database: each file of a run that exists becomes a row, then its directory goes. A
 * directory of a run that is gone is removed too (nothing could serve it). Returns how many files were moved in.
 */
export async function moveDiskArtifactsIn(db: Db, dataDir: string): Promise<number> {
  const root = join(dataDir, "artifacts");
  if (!existsSync(root)) return 0;
  const dirs = readdirSync(root).filter((d) => statSync(join(root, d)).isDirectory());
  const runs = await store.existingRunIds(db, dirs);
  let moved = 0;
  const at = new Date().toISOString();
  for (const d of dirs) {
    const dir = join(root, d);
    if (runs.has(d)) {
      for (const f of readdirSync(dir)) {
        const file = join(dir, f);
        if (!statSync(file).isFile()) continue;
        await store.putArtifactIfAbsent(db, d, f, new Uint8Array(readFileSync(file)), at);
        moved++;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
  if (readdirSync(root).length === 0) rmSync(root, { recursive: true, force: true });
  if (moved > 0) log.info("moved run artifacts from the data directory into the database", { files: moved, runs: dirs.length });
  return moved;
}
