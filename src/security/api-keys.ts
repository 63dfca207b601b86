// API key format: `svc_` + 43 base62 chars = 37 random + 6 chars of a base62 CRC32 checksum.
// The checksum lets a mistyped or made-up key be refused without touching the database.
import { BASE62, randomBase62 } from "./ids";

export const KEY_PATTERN = /^svc_[0-9A-Za-z]{43}$/;
const RANDOM_LEN = 37;
const CHECK_LEN = 6;

function crc32Base62(text: string): string {
  let n = Bun.hash.crc32(text) >>> 0;
  let out = "";
  for (let i = 0; i < CHECK_LEN; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = keyFromRandomPart(randomBase62(RANDOM_LEN));
  return { key, prefix: displayPrefix(key), hash: hashApiKey(key) };
}

/** The full key for 37 random base62 characters: `svc_` + them + their checksum. */
export function keyFromRandomPart(random: string): string {
  if (random.length !== RANDOM_LEN) throw new Error(`a key's random part has ${RANDOM_LEN} characters`);
  return `svc_${random}${crc32Base62(random)}`;
}

/** True when the string has the key shape and its checksum matches. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(4);
  return crc32Base62(body.slice(0, RANDOM_LEN)) === body.slice(RANDOM_LEN);
}

export function displayPrefix(key: string): string {
  return key.slice(0, 12);
}

export function hashApiKey(key: string): string {
  return new Bun.CryptoHasher("sha256").update(key).digest("hex");
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
