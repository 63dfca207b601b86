// Checks a request's Host header and hands the router an absolute URL it can route, whatever the Host was.
import type { Config } from "../../config/schema";
import { errorResponse } from "./errors";

/** RFC 9110's Host: a name or IPv4 address, or a bracketed IPv6 address, with an optional port. */
const HOST_HEADER = /^(?:[a-z0-9._~-]+|\[[0-9a-f:.]+\])(?::(\d{0,5}))?$/i;

/** Elysia finds the path by searching for "/" from index 11, which skips past the path of a host under 4
 * characters ("http://svc/healthz"). */
const ELYSIA_PATH_SEARCH_START = 11;

/** Where the path starts in a request URL ("/…" when Bun had no usable Host to build an absolute one). */
function pathStart(url: string): number {
  const scheme = url.indexOf("://");
  if (scheme < 0) return 0;
  const slash = url.indexOf("/", scheme + 3);
  return slash < 0 ? url.length : slash;
}

/** The path and query of a request URL, absolute or not. */
export function pathAndQuery(url: string): string {
  const rest = url.slice(pathStart(url));
  return rest.startsWith("/") ? rest : `/${rest}`;
}

/** The authority to route a request without a Host under: HTTP/1.0 does not require one. */
function ownAuthority(config: Config): string {
  if (config.base_url) return new URL(config.base_url).host;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host.includes(":") ? `[${config.host}]` : config.host;
  return config.port ? `${host}:${config.port}` : host;
}

export interface RequestTarget {
  /** The request to route and log: always under an absolute URL the router can route. */
  request: Request;
  /** The 400 to answer instead, when the Host header is malformed. */
  refusal: Response | null;
}

/**
 * The request as it can be routed: the same one when its URL is usable, else a copy under a routable URL. A
 * short host keeps its place in the URL, padded with a user-info part ("http://_pad_@svc/…") that URL's origin
 * and host ignore, so public links, cookies and CSRF checks still see the address the client used. A request
 * without Host (HTTP/1.0 needs none) is served under the server's own address; a malformed Host is refused.
 */
export function requestTarget(request: Request, config: Config): RequestTarget {
  const host = request.headers.get("host");
  const url = request.url;
  const underOwnAddress = () => {
    const scheme = config.tls.cert && config.tls.key ? "https" : "http";
    return new Request(`${scheme}://${ownAuthority(config)}${pathAndQuery(url)}`, request);
  };
  if (host === null) return { request: underOwnAddress(), refusal: null };
  const m = HOST_HEADER.exec(host);
  if (!m || (m[1] && Number(m[1]) > 65535) || !URL.canParse(url)) {
    const refusal = errorResponse("invalid_request", `the Host header ${JSON.stringify(host)} is not a host name or address with an optional port`, {
      details: [{ path: "Host", message: "must be a host name, an IPv4 address or a bracketed IPv6 address, optionally followed by :port" }],
    });
    return { request: underOwnAddress(), refusal };
  }
  if (pathStart(url) >= ELYSIA_PATH_SEARCH_START) return { request, refusal: null };
  const scheme = url.indexOf("://") + 3;
  return { request: new Request(`${url.slice(0, scheme)}_pad_@${url.slice(scheme)}`, request), refusal: null };
}
