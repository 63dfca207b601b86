// Environment secrets at rest: AES-256-GCM with a key kept outside the database (a 0600 file), so a copy of
// the database or a backup alone reveals no secret.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const SEALED_PREFIX = "v1.";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretsKeyError extends Error {}

/** Seals and opens secret values. The additional data ties a sealed value to its place (environment and name):
 * moved into another environment or under another name, it no longer opens. */
export class SecretBox {
  constructor(
    private readonly key: Buffer,
    /** Where the key came from, for messages. */
    readonly keyFile: string,
  ) {
    if (key.length !== KEY_BYTES) throw new SecretsKeyError(`${keyFile} is not an svc secrets key (expected ${KEY_BYTES} bytes, base64)`);
  }

  seal(value: string, place: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(place, "utf8"));
    const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${iv.toString("base64url")}.${body.toString("base64url")}`;
  }

  /**
   * What the database keeps to recognise this key without holding it: an HMAC of a fixed label under the key. Nodes
   * whose keys differ compute different checks.
   */
  keyCheck(): string {
    return `v1.${createHmac("sha256", this.key).update("svc secrets key check").digest("base64url")}`;
  }

  /** The value, or null when it does not open with this key at this place (another key, or tampered with). */
  open(sealed: string, place: string): string | null {
    if (!sealed.startsWith(SEALED_PREFIX)) return null;
    const [ivText, bodyText] = sealed.slice(SEALED_PREFIX.length).split(".");
    if (!ivText || bodyText === undefined) return null;
    const iv = Buffer.from(ivText, "base64url");
    const body = Buffer.from(bodyText, "base64url");
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, iv);
      decipher.setAAD(Buffer.from(place, "utf8"));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString("utf8");
    } catch {
      return null;
    }
  }
}

export function secretsKeyPath(dataDir: string, keyFile: string | undefined): string {
  return keyFile ?? join(dataDir, "secrets.key");
}

/**
 * Reads the key file, or creates it (mode 0600) when it does not exist yet. `refuseMissing` says why a missing
 * file is an error instead (null: it may be created): the database already holds sealed secrets, which a new key
 * could never open (a database restored without its key), or other nodes already use a key this one must share.
 */
export function loadSecretsKey(path: string, refuseMissing: string | null): { box: SecretBox; created: boolean; looseMode: boolean } {
  if (!existsSync(path)) {
    if (refuseMissing !== null) throw new SecretsKeyError(refuseMissing);
    if (!existsSync(dirname(path))) throw new SecretsKeyError(`cannot create the secrets key ${path}: the directory ${dirname(path)} does not exist`);
    try {
      // Exclusive create: two processes starting at once never write two different keys.
      writeFileSync(path, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
      chmodSync(path, 0o600);
      return { box: new SecretBox(readKey(path), path), created: true, looseMode: false };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw new SecretsKeyError(`cannot create the secrets key ${path}: ${(e as Error).message}`);
    }
  }
  const looseMode = process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0;
  return { box: new SecretBox(readKey(path), path), created: false, looseMode };
}

function readKey(path: string): Buffer {
  try {
    return Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  } catch (e) {
    throw new SecretsKeyError(`cannot read the secrets key ${path}: ${(e as Error).message}`);
  }
}
