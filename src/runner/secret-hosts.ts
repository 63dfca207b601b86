// A run in a protected environment sends its secrets only to the environment's allowed hosts: checked right
// before a request is sent (each hop of it) or a page is opened or filled, so nothing leaves when it fails.
import type { Masker } from "./secret-masking";
import { StepFailure, type StepContext } from "./step-result";

export interface SecretHosts {
  environment: string;
  /** Lowercase host names as a URL carries them. */
  allowed: string[];
  find: Masker["find"];
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Why `parts` — a request's URL, headers and body after interpolation, a page URL, a value to type — may not go to
 * `url`: they carry a secret and its host is not allowed. Null when they may.
 */
export function secretRefusal(hosts: SecretHosts, url: string, parts: (string | undefined)[]): string | null {
  const host = hostOf(url);
  if (host !== null && hosts.allowed.includes(host)) return null;
  for (const part of parts) {
    const name = part ? hosts.find(part) : null;
    if (name === null) continue;
    const allowed = hosts.allowed.length ? hosts.allowed.join(", ") : "none: the environment has no BASE_URL and no allowed_hosts";
    return `the secret ${name} was not sent to ${host || url}: the protected environment "${hosts.environment}" sends its secrets only to its allowed_hosts (${allowed})`;
  }
  return null;
}

/** Throws (the step errs, nothing is sent) when `parts` carry a secret and `url` is not on an allowed host. */
export function assertSecretsMayGo(ctx: StepContext, url: string, parts: (string | undefined)[]): void {
  const why = ctx.secretHosts ? secretRefusal(ctx.secretHosts, url, parts) : null;
  if (why !== null) throw new StepFailure("error", why);
}

/** Every header name and value, for the check. */
export const headerParts = (headers: Record<string, string>): string[] => Object.entries(headers).flat();
