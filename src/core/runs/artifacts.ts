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

/** A write to the bucket that failed (a timeout, say) may still land: its object is deleted after this long. */
const LATE_WRITE_MS = 2 * 60_000;
/** A delete the bucket refused or did not answer is tried again after this long; the others go on meanwhile. */
const DELETE_RETRY_MS = 60 * 60_000;

/**
 * Keeps a screenshot of a run (replacing one of the same name); anything else is refused. With `[artifacts.s3]` the
 * bytes go to the bucket first and the row names the object: a row never points at an object that was not written.
 * A bucket that does not take it is a 503 that says only that (its address and the reason go to the log).
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
  try {
    await core.objects.put(objectKey, bytes);
  } catch (e) {
    log.error("could not keep a screenshot in the artifacts bucket", { run_id: runId, name, error: (e as Error).message });
    // The write may still land after its timeout: the object is deleted later, unless a row names it by then.
    await store.noteObjectDeletions(core.db, [objectKey], new Date(Date.now() + LATE_WRITE_MS).toISOString()).catch(() => undefined);
    throw new AppError("unavailable", "the artifacts bucket refused it or did not answer (the server's log says why)");
  }
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
    throw new AppError("unavailable", "the artifacts bucket did not answer: try again later");
  }
}

/**
 * Deletes from the bucket the objects whose notes are due (rows removed by retention or a deleted project, noted by
 * a trigger; failed writes), `batch` at a time. Never an object a row still names, and never one outside this
 * installation's prefix (a restored copy of the database names the original's objects). A delete that fails is
 * tried again an hour later while the others go on. Without a bucket, nothing is done.
 */
export async function deleteRemovedArtifactObjects(core: Core, batch = 100): Promise<{ deleted: number; failed: number; error: string | null }> {
  const done = { deleted: 0, failed: 0, error: null as string | null };
  const objects = core.objects;
  if (!objects) return done;
  for (;;) {
    const keys = await store.dueObjectDeletions(core.db, new Date().toISOString(), batch);
    if (keys.length === 0) return done;
    const inUse = await store.objectKeysInUse(core.db, keys);
    const forget: string[] = [];
    const retry: string[] = [];
    for (const key of keys) {
      if (inUse.has(key)) forget.push(key);
      else if (!objects.owns(key)) {
        log.warn(
          "an artifact object outside this server's artifacts.s3 prefix is left in the bucket (its row came with a copy of another installation's database)",
          {
            key,
          },
        );
        forget.push(key);
      } else {
        try {
          await objects.delete(key);
          forget.push(key);
          done.deleted++;
        } catch (e) {
          retry.push(key);
          done.failed++;
          done.error ??= (e as Error).message;
        }
      }
    }
    await store.forgetObjectDeletions(core.db, forget);
    await store.noteObjectDeletions(core.db, retry, new Date(Date.now() + DELETE_RETRY_MS).toISOString());
    if (keys.length < batch) return done;
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
