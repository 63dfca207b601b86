// Sends an http step's request: redirects are followed here, one hop at a time, so that every URL requested is
// checked first (`checkHop`) and the run's cookie jar sees every response, redirects included.
import { CookieJar } from "tough-cookie";
import { TextMemo } from "../memo";
import { requestUrlProblem } from "../manifest/request-urls";
import { metadataProblemText, metadataWhere } from "../security/instance-metadata";
import { StepFailure } from "./step-result";

export const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that describe the body: dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-location"];
/** Credentials the step wrote for one origin are not handed to another (as fetch does on a cross-origin redirect). */
const ORIGIN_CREDENTIALS = ["authorization", "proxy-authorization", "cookie"];

export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * A run attempt's cookies. tough-cookie's jar is made when the first response sets a cookie: most runs never get
 * one, and asking even an empty jar costs a public-suffix lookup per request (a third of a worker's time per check).
 */
export class RunCookies {
  private jar: CookieJar | null = null;

  /** No response of the run has set a cookie yet: nothing to add to a request (checked without awaiting). */
  get empty(): boolean {
    return this.jar === null;
  }

  /** The Cookie header's value for this URL ("" when the run has no cookie for it). */
  async header(url: string): Promise<string> {
    return this.jar === null ? "" : this.jar.getCookieString(url);
  }

  /** Keeps a response's cookies; one the jar refuses (bad domain, Secure over http, malformed) is left out, as a browser does. */
  async keep(setCookies: string[], url: string): Promise<void> {
    if (setCookies.length === 0) return;
    this.jar ??= new CookieJar();
    for (const line of setCookies) await this.jar.setCookie(line, url, { ignoreError: true });
  }
}

export interface FetchOptions {
  followRedirects: boolean;
  cookies: RunCookies;
  signal: AbortSignal;
  /** Checks each hop's request as it is about to go out (where the run's secrets may be sent); throws to stop it. */
  beforeSend?: (req: OutgoingRequest) => void;
}

/**
 * Every URL svc is about to request, the step's own and each redirect's: only http and https. A check of the
 * host (for example against where secrets may go) belongs here too, so it runs on every hop.
 */
export function checkHop(url: URL, hop: number): void {
  const problem = requestUrlProblem(url);
  if (problem === null) return;
  throw new StepFailure(
    "error",
    hop === 0 ? `svc will not request ${url.href}: ${problem}` : `the response redirected to ${url.href}, which svc will not follow: ${problem}`,
  );
}

function metadataRefusal(url: URL, hop: number, where: string | null): void {
  if (where === null) return;
  const problem = metadataProblemText(where);
  throw new StepFailure(
    "error",
    hop === 0 ? `svc will not request ${url.href}: ${problem}` : `the response redirected to ${url.href}, which svc will not follow: ${problem}`,
  );
}

/**
 * Throws (the step errs, nothing is sent) when a hop goes to the cloud's instance metadata; for a host name, answers
 * a promise that rejects so once the name is resolved, and null when there is nothing to wait for.
 */
export function checkNotMetadata(url: URL, hop: number): Promise<void> | null {
  const where = metadataWhere(url);
  if (!(where instanceof Promise)) {
    metadataRefusal(url, hop, where);
    return null;
  }
  return where.then((w) => metadataRefusal(url, hop, w));
}

/** The same step requests the same URL run after run: parsed once per text. Nothing here changes what it gets. */
const parsedUrls = new TextMemo<URL>(5000);

/** The URL as fetch will send it, checked; a URL that does not parse is the step's error. */
export function parseRequestUrl(url: string): URL {
  try {
    return parsedUrls.get(url, () => new URL(url));
  } catch {
    throw new StepFailure("error", `"${url}" is not a valid URL: write an absolute http(s) URL or a path relative to BASE_URL`);
  }
}

function withoutHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k.toLowerCase())));
}

/** The step's headers plus the jar's cookies for this URL (after a `cookie` header the step wrote itself). */
async function headersFor(url: URL, headers: Record<string, string>, cookies: RunCookies): Promise<Record<string, string>> {
  const fromJar = await cookies.header(url.href);
  if (!fromJar) return headers;
  const own = Object.keys(headers).find((k) => k.toLowerCase() === "cookie");
  if (own === undefined) return { ...headers, cookie: fromJar };
  return { ...headers, [own]: `${headers[own]}; ${fromJar}` };
}

/**
 * The final response, after following up to MAX_REDIRECTS redirects with fetch's rules: 303 becomes a GET
 * (HEAD stays HEAD), so do 301 and 302 after a POST, dropping the body; 307 and 308 keep method and body.
 * `sent` is the first request as it went out (with the jar's cookies), for the step's result; `answeredBy` the URL
 * of the last, whose answer `response` is.
 */
export async function fetchFollowingRedirects(
  req: OutgoingRequest,
  opts: FetchOptions,
): Promise<{ response: Response; sent: OutgoingRequest; answeredBy: string }> {
  let url = parseRequestUrl(req.url);
  let { method, headers, body } = req;
  let sent: OutgoingRequest | null = null;
  for (let hop = 0; ; hop++) {
    checkHop(url, hop);
    const metadata = checkNotMetadata(url, hop);
    if (metadata !== null) await metadata;
    // Most runs never get a cookie: no promise to wait for then.
    const withCookies = opts.cookies.empty ? headers : await headersFor(url, headers, opts.cookies);
    const href = url.href;
    const outgoing = { method, url: href, headers: withCookies, body };
    opts.beforeSend?.(outgoing);
    sent ??= outgoing;
    const res = await fetch(href, { method, headers: withCookies, body, redirect: "manual", signal: opts.signal });
    const setCookies = res.headers.getSetCookie();
    if (setCookies.length > 0) await opts.cookies.keep(setCookies, href);
    const location = res.headers.get("location");
    if (!opts.followRedirects || !REDIRECT_STATUSES.has(res.status) || location === null) return { response: res, sent, answeredBy: href };
    await res.body?.cancel().catch(() => undefined);
    if (hop + 1 > MAX_REDIRECTS) {
      throw new StepFailure(
        "error",
        `${req.method} ${req.url} redirected more than ${MAX_REDIRECTS} times (last to ${location}): check the endpoint for a redirect loop, or set "follow_redirects": false to check the redirect itself`,
      );
    }
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new StepFailure("error", `the response redirected to "${location}", which is not a valid URL`);
    }
    if ((res.status === 303 && method !== "HEAD") || ((res.status === 301 || res.status === 302) && method === "POST")) {
      method = "GET";
      body = undefined;
      headers = withoutHeaders(headers, BODY_HEADERS);
    }
    if (next.origin !== url.origin) headers = withoutHeaders(headers, ORIGIN_CREDENTIALS);
    url = next;
  }
}
