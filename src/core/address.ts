// The address people reach the server at when no request tells it: for links the operator is shown and links
// an in-process call hands out.
import type { Config } from "../../config/schema";

/** Where people reach the server as configured: base_url, else the listener (a wildcard host as 127.0.0.1). */
export function configuredAddress(config: Config): string {
  if (config.base_url) return config.base_url.replace(/\/+$/, "");
  return listenerAddress(config);
}

/** The address the server listens on, as this machine reaches it (a wildcard host as 127.0.0.1). */
export function listenerAddress(config: Config): string {
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  const scheme = config.tls.cert && config.tls.key ? "https" : "http";
  return `${scheme}://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
}
