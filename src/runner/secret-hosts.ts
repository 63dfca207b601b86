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

/** The first secret `parts` carry and the allowed hosts as the messages name them, when `url`'s host is not allowed. */
function secretAway(hosts: SecretHosts, url: string, parts: (string | undefined)[]): { name: string; host: string; allowed: string } | null {
  const host = hostOf(url);
  if (host !== null && hosts.allowed.includes(host)) return null;
  for (const part of parts) {
    const name = part ? hosts.find(part) : null;
    if (name === null) continue;
    const allowed = hosts.allowed.length ? hosts.allowed.join(", ") : "none: the environment has no BASE_URL and no allowed_hosts";
    return { name, host: host || url, allowed };
  }
  return null;
}

/**
 * Why `parts` — a request's URL, headers and body after interpolation, a page URL, a value to type — may not go to
 * `url`: they carry a secret and its host is not allowed. Null when they may.
 */
export function secretRefusal(hosts: SecretHosts, url: string, parts: (string | undefined)[]): string | null {
  const away = secretAway(hosts, url, parts);
  return away
    ? `the secret ${away.name} was not sent to ${away.host}: the protected environment "${hosts.environment}" sends its secrets only to its allowed_hosts (${away.allowed})`
    : null;
}

/**
 * Throws (the step errs, nothing is compared) when `parts` — a step's checks or locators after interpolation — carry
 * a secret and `url`, what they would be checked against (a response, a page), is not on an allowed host. Whoever
 * answers there would learn the secret from pass or fail alone: a check like `matches: "^[{{TOKEN}}]+$"` against
 * answers of one's choosing tells its characters one by one.
 */
export function assertSecretsMayBeCompared(ctx: StepContext, url: string, parts: (string | undefined)[]): void {
  const away = ctx.secretHosts ? secretAway(ctx.secretHosts, url, parts) : null;
  if (away === null) return;
  throw new StepFailure(
    "error",
    `the secret ${away.name} was not compared with what ${away.host} answered: the protected environment "${ctx.secretHosts?.environment}" checks its secrets only against its allowed_hosts (${away.allowed})`,
  );
}

/** Every string inside an interpolated value (a check, a step), for the checks above. */
export function stringsIn(value: unknown, into: string[] = []): string[] {
  if (typeof value === "string") into.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsIn(v, into);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value)) stringsIn(v, into);
  return into;
}

/** Throws (the step errs, nothing is sent) when `parts` carry a secret and `url` is not on an allowed host. */
export function assertSecretsMayGo(ctx: StepContext, url: string, parts: (string | undefined)[]): void {
  const why = ctx.secretHosts ? secretRefusal(ctx.secretHosts, url, parts) : null;
  if (why !== null) throw new StepFailure("error", why);
}

/** Every header name and value, for the check. */
export const headerParts = (headers: Record<string, string>): string[] => Object.entries(headers).flat();
