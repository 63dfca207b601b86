// Runner tokens: `svcr_` + 43 base62 chars (37 random + a 6-char checksum, as API keys have). Only the SHA-256
// hash is stored; a token is looked up by its display prefix and compared in constant time.
import { hashApiKey, keyFromRandomPart, sameDigest } from "./api-keys";
import { randomBase62 } from "./ids";

export const RUNNER_TOKEN_PATTERN = /^svcr_[0-9A-Za-z]{43}$/;

export function generateRunnerToken(): { token: string; prefix: string; hash: string } {
  // The same body and checksum as an API key, told apart by its own prefix.
  const token = `svcr_${keyFromRandomPart(randomBase62(37)).slice(4)}`;
  return { token, prefix: runnerTokenPrefix(token), hash: hashApiKey(token) };
}

/** True when the string has the token shape and its checksum matches (no database needed to refuse it). */
export function isWellFormedRunnerToken(token: string): boolean {
  if (!RUNNER_TOKEN_PATTERN.test(token)) return false;
  const body = token.slice(5);
  return keyFromRandomPart(body.slice(0, 37)) === `svc_${body}`;
}

export function runnerTokenPrefix(token: string): string {
  return token.slice(0, 13);
}

export function runnerTokenMatches(token: string, storedHash: string): boolean {
  return sameDigest(hashApiKey(token), storedHash);
}
