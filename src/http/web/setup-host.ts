// First-run setup creates the owner of a fresh installation, so it is answered only where the person at the
// keyboard must be the operator: on a loopback Host, or at the configured base_url. A page on another site whose
// name was made to resolve to this server (DNS rebinding) sends its own name as Host, and is refused.
import type { Config } from "../../../config/schema";

export const SETUP_ELSEWHERE =
  "First-run setup is only offered on this machine's loopback address (such as http://localhost:<port>) or at the " +
  "configured base_url. Set base_url (SVC_BASE_URL) to the address you open, or create the first user on the server: " +
  "svc admin create-user --email you@example.com --name You --workspace main --password-stdin";

function isLoopback(hostname: string): boolean {
  const h = hostname.toLowerCase();
  return h === "localhost" || h === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** The host the browser addressed: the Host header, or behind a trusted proxy the host it reports. */
function addressedHost(config: Config, request: Request): string | null {
  const forwarded = config.trust_proxy ? request.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  return forwarded || request.headers.get("host");
}

export function setupAllowedHere(config: Config, request: Request): boolean {
  const host = addressedHost(config, request);
  if (!host) return false;
  // Read with base_url's scheme, so that its default port compares alike whether written or not.
  const base = config.base_url ? new URL(config.base_url) : null;
  let addressed: URL;
  try {
    addressed = new URL(`${base?.protocol ?? "http:"}//${host}`);
  } catch {
    return false;
  }
  return isLoopback(addressed.hostname) || (base !== null && base.host.toLowerCase() === addressed.host.toLowerCase());
}
