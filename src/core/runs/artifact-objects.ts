// Where run artifacts live when `[artifacts.s3]` names a bucket: objects in an S3-compatible store, through Bun's
// own S3 client (SigV4; AWS, MinIO, Ceph, R2, …). The database keeps each artifact's row (name, size, the object's
// key), so listing, access checks and deletion stay where the runs are; only the bytes move.
import type { Config } from "../../../config/schema";

/** One request to the bucket may take this long before it counts as failed. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface ArtifactObjects {
  /** `s3://bucket/prefix` at its endpoint, for messages and readiness (never a credential). */
  readonly where: string;
  /** The key of a run's artifact: the prefix, the run, the file. */
  keyOf(runId: string, name: string): string;
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** undefined: no such object (deleted from the bucket behind svc's back, or a restore older than the bucket). */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Deleting an object that is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Writes and deletes a small object: proves the bucket is there and the credentials may write to it. */
  probe(): Promise<void>;
}

export class ArtifactStoreError extends Error {}

function withTimeout<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ArtifactStoreError(`${what}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)), REQUEST_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const codeOf = (e: unknown): string | undefined => (e as { code?: unknown }).code as string | undefined;

/** The bucket of `[artifacts.s3]`, or null when none is configured (artifacts stay in the database). */
export function artifactObjects(config: Config): ArtifactObjects | null {
  const s3 = config.artifacts.s3;
  if (s3.bucket === undefined) return null;
  const client = new Bun.S3Client({
    bucket: s3.bucket,
    region: s3.region,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    ...(s3.access_key_id ? { accessKeyId: s3.access_key_id } : {}),
    ...(s3.secret_access_key ? { secretAccessKey: s3.secret_access_key } : {}),
    virtualHostedStyle: s3.virtual_hosted_style,
  });
  const where = `s3://${s3.bucket}/${s3.prefix}${s3.endpoint ? ` at ${s3.endpoint}` : ` in ${s3.region}`}`;
  const fail = (what: string, e: unknown) => new ArtifactStoreError(`${what} (${where}): ${codeOf(e) ? `${codeOf(e)}: ` : ""}${(e as Error).message}`);
  const objects: ArtifactObjects = {
    where,
    keyOf: (runId, name) => `${s3.prefix}${runId}/${name}`,
    async put(key, bytes) {
      try {
        await withTimeout("writing an artifact", client.write(key, bytes, { type: key.endsWith(".png") ? "image/png" : "application/octet-stream" }));
      } catch (e) {
        throw fail(`could not write the artifact ${key}`, e);
      }
    },
    async get(key) {
      try {
        return new Uint8Array(await withTimeout("reading an artifact", client.file(key).arrayBuffer()));
      } catch (e) {
        if (codeOf(e) === "NoSuchKey") return undefined;
        throw fail(`could not read the artifact ${key}`, e);
      }
    },
    async delete(key) {
      try {
        await withTimeout("deleting an artifact", client.delete(key));
      } catch (e) {
        if (codeOf(e) === "NoSuchKey") return;
        throw fail(`could not delete the artifact ${key}`, e);
      }
    },
    async probe() {
      const key = `${s3.prefix}svc-probe-${crypto.randomUUID()}`;
      await objects.put(key, new TextEncoder().encode("svc"));
      await objects.delete(key);
    },
  };
  return objects;
}
