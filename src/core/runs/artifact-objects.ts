// Where run artifacts live when `[artifacts.s3]` names a bucket: objects in an S3-compatible store, through Bun's
// own S3 client (SigV4; AWS, MinIO, Ceph, R2, …). The database keeps each artifact's row (name, size, the object's
// key), so listing, access checks and deletion stay where the runs are; only the bytes move.
import type { Config } from "../../../config/schema";
import { type MachineCredentials, MachineCredentialSource } from "./machine-credentials";

/**
 * One request to the bucket may take this long before it counts as failed: under the HTTP server's idle timeout
 * (10 s), so that a client reading an artifact, or a runner handing one in, gets the 503 rather than a closed
 * connection when the bucket hangs.
 */
const REQUEST_TIMEOUT_MS = 8_000;

export interface ArtifactObjects {
  /** `s3://bucket/prefix` at its endpoint, for messages and readiness (never a credential). */
  readonly where: string;
  /** The key of a run's artifact: the prefix, the run, the file. */
  keyOf(runId: string, name: string): string;
  /** Whether a key is under this installation's prefix: the only objects it ever deletes. */
  owns(key: string): boolean;
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** undefined: no such object (deleted from the bucket behind svc's back, or a restore older than the bucket). */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Deleting an object that is not there is not an error. */
  delete(key: string): Promise<void>;
  /** Writes and deletes a small object: proves the bucket is there and the credentials may write to it. */
  probe(): Promise<void>;
}

export class ArtifactStoreError extends Error {
  constructor(
    message: string,
    /** The bucket answered that it will not do this (no such bucket, credentials refused): a setting is wrong. */
    readonly refused: boolean,
  ) {
    super(message);
  }
}

/**
 * Answers of the bucket that say a setting is wrong, not that it is down: a start with these stops; with anything
 * else (refused connections, timeouts, 5xx) the server starts, and artifacts wait for the bucket.
 */
const REFUSALS = new Set([
  "NoSuchBucket",
  "AccessDenied",
  "AllAccessDisabled",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "InvalidBucketName",
  "AuthorizationHeaderMalformed",
  "PermanentRedirect",
  "InvalidToken",
  "ExpiredToken",
  "MissingSecurityHeader",
  "InvalidArgument",
]);

function withTimeout<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`${what}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`), { code: "Timeout" })),
      REQUEST_TIMEOUT_MS,
    );
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const codeOf = (e: unknown): string | undefined => (e as { code?: unknown }).code as string | undefined;

/** The bucket of `[artifacts.s3]`, or null when none is configured (artifacts stay in the database). */
export function artifactObjects(config: Config, env: Record<string, string | undefined> = process.env): ArtifactObjects | null {
  const s3 = config.artifacts.s3;
  if (s3.bucket === undefined) return null;
  // Always named: Bun's client would otherwise take S3_ENDPOINT or AWS_ENDPOINT from the environment unasked.
  const endpoint = s3.endpoint ?? `https://s3.${s3.region}.amazonaws.com`;
  const base = { bucket: s3.bucket, region: s3.region, endpoint, virtualHostedStyle: s3.virtual_hosted_style };
  const where = `s3://${s3.bucket}/${s3.prefix} at ${endpoint}`;
  // Keys set in the configuration, or in the environment (Bun's client reads AWS_ACCESS_KEY_ID … itself), are used
  // as they are; without any, the machine's role is asked for temporary ones (machine-credentials.ts).
  const fixed = Boolean(s3.access_key_id || env.AWS_ACCESS_KEY_ID || env.S3_ACCESS_KEY_ID);
  const machine = fixed ? null : new MachineCredentialSource(env);
  let client: Bun.S3Client | null = fixed
    ? new Bun.S3Client({
        ...base,
        ...(s3.access_key_id ? { accessKeyId: s3.access_key_id } : {}),
        ...(s3.secret_access_key ? { secretAccessKey: s3.secret_access_key } : {}),
        ...(s3.session_token ? { sessionToken: s3.session_token } : {}),
      })
    : null;
  let signedWith: MachineCredentials | null = null;
  const clientNow = async (): Promise<Bun.S3Client> => {
    if (machine === null) return client as Bun.S3Client;
    let credentials: MachineCredentials;
    try {
      credentials = await machine.current();
    } catch (e) {
      throw new ArtifactStoreError(
        `no credentials for ${where}: none are set (artifacts.s3.access_key_id and secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), and ${machine.describe()} gave none: ${(e as Error).message}`,
        true,
      );
    }
    if (credentials !== signedWith || client === null) {
      const { accessKeyId, secretAccessKey, sessionToken } = credentials;
      client = new Bun.S3Client({ ...base, accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) });
      signedWith = credentials;
    }
    return client;
  };
  const fail = (what: string, e: unknown) => {
    if (e instanceof ArtifactStoreError) return e;
    const code = codeOf(e);
    return new ArtifactStoreError(
      `${what} (${where}): ${code ? `${code}: ` : ""}${(e as Error).message}`,
      code !== undefined && (REFUSALS.has(code) || code.startsWith("ERR_S3_")),
    );
  };
  const objects: ArtifactObjects = {
    where,
    keyOf: (runId, name) => `${s3.prefix}${runId}/${name}`,
    owns: (key) => key.startsWith(s3.prefix),
    async put(key, bytes) {
      try {
        await withTimeout(
          "writing an artifact",
          (await clientNow()).write(key, bytes, { type: key.endsWith(".png") ? "image/png" : "application/octet-stream" }),
        );
      } catch (e) {
        throw fail(`could not write ${key}`, e);
      }
    },
    async get(key) {
      try {
        return new Uint8Array(await withTimeout("reading an artifact", (await clientNow()).file(key).arrayBuffer()));
      } catch (e) {
        if (codeOf(e) === "NoSuchKey") return undefined;
        throw fail(`could not read ${key}`, e);
      }
    },
    async delete(key) {
      try {
        await withTimeout("deleting an artifact", (await clientNow()).delete(key));
      } catch (e) {
        if (codeOf(e) === "NoSuchKey") return;
        throw fail(`could not delete ${key}`, e);
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
