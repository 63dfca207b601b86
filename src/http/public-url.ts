// The address people and scripts use to reach this server: `base_url` when configured; else, behind a trusted
// proxy, the scheme and host the proxy reports (X-Forwarded-Proto / X-Forwarded-Host, with a port only when
// the proxy names one), else its Host header; else the address the request came in on.
import type { Config } from "../../config/schema";

const first = (v: string | null) => v?.split(",")[0]?.trim() || undefined;

/** The scheme a trusted proxy says the client used ("http" or "https"), or undefined. */
export function forwardedProto(config: Config, request: Request): "http" | "https" | undefined {
  if (!config.trust_proxy) return undefined;
  const proto = first(request.headers.get("x-forwarded-proto"))?.toLowerCase();
  return proto === "http" || proto === "https" ? proto : undefined;
}

export function publicBaseUrl(config: Config, request: Request): string {
  if (config.base_url) return config.base_url.replace(/\/+$/, "");
  const url = new URL(request.url);
  if (!config.trust_proxy) return url.origin;
  const proto = forwardedProto(config, request);
  const host = first(request.headers.get("x-forwarded-host"));
  const scheme = proto ?? url.protocol.slice(0, -1);
  // Without a (well-formed) forwarded host, the Host header the proxy passed on is the public one.
  if (!host || !/^[\w.-]+(:\d{1,5})?$|^\[[\da-f:.]+\](:\d{1,5})?$/i.test(host)) return `${scheme}://${url.host}`;
  return new URL(`${scheme}://${host}`).origin;
}
