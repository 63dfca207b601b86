// Member-written tests may request any http(s) target but one: the cloud's instance metadata. On AWS, GCP, Azure,
// OpenStack and others it answers at 169.254.169.254 (ECS at 169.254.170.2, AWS over IPv6 at fd00:ec2::254, Alibaba
// Cloud at 100.100.100.200), and to whoever asks from the machine it hands the machine's own credentials: the role
// svc's host runs with, which may read the artifacts bucket of every workspace, or more. The whole link-local range
// (169.254.0.0/16, fe80::/10) is refused with it: nothing a team tests lives there. Checked on the address a URL
// names and, for a host name, on every address it resolves to, on each hop of a request: by the run workers (http
// steps, browser runs) and by the crawl of a feature's page.
import { isIPv4, isIPv6 } from "node:net";

const V4_ONLY = new Set(["100.100.100.200"]);

function v4Blocked(address: string): boolean {
  return address.startsWith("169.254.") || V4_ONLY.has(address);
}

/** The eight 16-bit groups of an IPv6 address (with an embedded IPv4 tail read as two), or null. */
function groupsOf(address: string): number[] | null {
  let text = address.toLowerCase();
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = (tail[1] as string).split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split("::", 2) as [string, string | undefined];
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => Number.parseInt(g, 16)));
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  const groups = rest === undefined ? front : [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** Whether member tests may not reach this IP address (v4 or v6, without brackets). */
export function isMetadataAddress(address: string): boolean {
  if (isIPv4(address)) return v4Blocked(address);
  if (!isIPv6(address)) return false;
  const g = groupsOf(address);
  if (g === null) return false;
  // fe80::/10, link-local.
  if (((g[0] as number) & 0xffc0) === 0xfe80) return true;
  // fd00:ec2::254, AWS's instance metadata over IPv6.
  if (g.join(":") === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(":")) return true;
  // An IPv4 address mapped into IPv6 (::ffff:a.b.c.d) reaches that IPv4 address; the old compatible form
  // (::a.b.c.d) is refused alike.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    const v4 = [(g[6] as number) >> 8, (g[6] as number) & 0xff, (g[7] as number) >> 8, (g[7] as number) & 0xff].join(".");
    return v4Blocked(v4);
  }
  return false;
}

/** A URL's host as an address when it is one (the URL parser writes IPv6 in brackets), else null. */
function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIPv4(bare) || isIPv6(bare) ? bare : null;
}

/** Whether a URL's host is itself an address member tests may not reach (no lookup: for synchronous checks). */
export function namesMetadataAddress(hostname: string): boolean {
  const address = literalAddress(hostname);
  return address !== null && isMetadataAddress(address);
}

/** How long a host name's answer is kept: as long as Bun's own DNS cache keeps it for fetch. */
const KEEP_MS = 30_000;
const resolved = new Map<string, { blocked: string | null; until: number }>();

/**
 * Whether fetch sends a request for `host` to a proxy (HTTP_PROXY / HTTPS_PROXY, unless NO_PROXY names the host or
 * a domain above it): the proxy then resolves the name, not this machine, which may have no DNS of its own.
 */
export function goesThroughProxy(host: string, env: Record<string, string | undefined> = process.env): boolean {
  if (!(env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy)) return false;
  const name = host.toLowerCase();
  for (const raw of (env.NO_PROXY ?? env.no_proxy ?? "").split(",")) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/:\d+$/, "")
      .replace(/^\*?\./, "");
    if (entry === "*" || (entry !== "" && (name === entry || name.endsWith(`.${entry}`)))) return false;
  }
  return true;
}

/**
 * The first address member tests may not reach among those `host` resolves to; null if none (or it resolves to
 * nothing, or a proxy resolves it: see goesThroughProxy).
 */
export async function resolvedMetadataAddress(host: string): Promise<string | null> {
  if (goesThroughProxy(host)) return null;
  const now = Date.now();
  const known = resolved.get(host);
  if (known !== undefined && known.until > now) return known.blocked;
  let blocked: string | null = null;
  try {
    const answers = await Bun.dns.lookup(host, {});
    blocked = answers.find((a) => isMetadataAddress(a.address))?.address ?? null;
  } catch {
    // A name that does not resolve: the request itself fails and says so.
  }
  if (resolved.size >= 1000) resolved.clear();
  resolved.set(host, { blocked, until: now + KEEP_MS });
  return blocked;
}

/**
 * What names the instance metadata when `url` goes there: its address, or "NAME resolves to ADDRESS, which"; null
 * when it does not. A promise only for a host name (most steps of a run go to an address, and wait for nothing).
 */
export function metadataWhere(url: URL): string | null | Promise<string | null> {
  const address = literalAddress(url.hostname);
  if (address !== null) return isMetadataAddress(address) ? address : null;
  return resolvedMetadataAddress(url.hostname).then((blocked) => (blocked === null ? null : `${url.hostname} resolves to ${blocked}, which`));
}

/** Why a request to `where` (an address, or "NAME resolves to ADDRESS, which") is refused. */
export const metadataProblemText = (where: string) =>
  `${where} is in the cloud's instance metadata range (link-local), which hands out the credentials of the machine svc runs on`;

/** Why `url` may not be requested (a browser's goto, a crawled page), or null. */
export async function metadataProblem(url: URL): Promise<string | null> {
  const where = await metadataWhere(url);
  return where === null ? null : metadataProblemText(where);
}
