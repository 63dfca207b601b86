// What every CLI command shares: resolving settings, making the client, and turning failures into exit codes.
import { ApiClient, describeWait } from "../src/client/api-client";
import { ClientError, exitCodeFor } from "../src/client/errors";
import { type ResolvedSettings, resolveSettings, SettingsError } from "../src/client/settings";
import { UsageError } from "./usage";
import { printable } from "./output";
import { VERSION } from "../src/version";

export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4, rateLimited: 5, server: 6, watchTimeout: 7 } as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  the watched run or generation ended failed, error, timed_out or cancelled; apply --dry-run --exit-code: the project differs
  2  usage error (bad arguments, invalid request (400), a conflict (409), a record changed since it was read (412),
     a body too large (413), .svc.json holding a key)
  3  authentication (401: no key, an invalid, revoked or expired key) or not allowed (403)
  4  not found (404)
  5  rate limited, after honouring Retry-After
  6  server or network error (5xx, timeout, unreachable)
  7  --watch-timeout passed before the watched run or generation ended (it goes on on the server)`;

export interface CommonFlags {
  server?: string;
  project?: string;
  json?: boolean;
}

export function settingsFor(flags: CommonFlags): ResolvedSettings {
  return resolveSettings({ flags: { server: flags.server, project: flags.project } });
}

export function clientFor(settings: ResolvedSettings, opts: { requireKey?: boolean; key?: string } = {}): ApiClient {
  const key = opts.key ?? settings.key?.value ?? null;
  if (!key && opts.requireKey !== false) {
    throw new ClientError(401, "unauthorized", settings.withheldKey ?? "no API key: run `svc login`, or set SVC_API_KEY");
  }
  return new ApiClient({
    server: settings.server.value,
    key,
    userAgent: `svc-cli/${VERSION}`,
    onRetry: (n) => {
      const why = n.status === 429 ? "rate limited" : n.status === 503 ? "server unavailable" : "network error";
      process.stderr.write(`svc: ${why}; retrying in ${describeWait(n.waitMs)} (attempt ${n.attempt})\n`);
    },
  });
}

export function describeError(e: ClientError): string {
  // An error's message may quote what was sent or stored (a name, a key): shown, never acted on by the terminal.
  const lines = [`svc: ${printable(e.error)}: ${printable(e.message, true)}`];
  for (const d of e.details ?? []) lines.push(`  ${printable(d.path || "(body)")}: ${printable(d.message, true)}`);
  if (e.status === 401) lines.push("  sign in with `svc login`, or set SVC_API_KEY to a valid key");
  if (e.status === 429 && e.retryAfterSeconds !== undefined) lines.push(`  the server asks to retry after ${e.retryAfterSeconds} s`);
  return lines.join("\n");
}

/** Runs a command body; its number (or 0) becomes the exit code, and every failure a one-line message. */
export async function runCommand(body: () => Promise<number | undefined>): Promise<void> {
  let code: number;
  try {
    code = (await body()) ?? EXIT.ok;
  } catch (e) {
    if (e instanceof ClientError) {
      process.stderr.write(`${describeError(e)}\n`);
      code = exitCodeFor(e);
    } else if (e instanceof SettingsError || e instanceof UsageError) {
      process.stderr.write(`svc: ${printable(e.message, true)}\n`);
      code = EXIT.usage;
    } else {
      throw e;
    }
  }
  process.exitCode = code;
}
