// The web application's pages, served with the headers that keep them out of other sites' frames.
// Bun answers a route holding a bundled HTML page itself and cannot add headers to it, so the bundle sits on
// an unguessable route of this same server; its HTML is fetched from there once and served on the real paths
// with the headers. The scripts and styles it refers to stay Bun's own routes (framing concerns documents only).
import type { HTMLBundle, Server } from "bun";
import { randomBase62 } from "../../security/ids";
import { errorResponse } from "../errors";

/** Headers of every page: never framed (the header form; browsers ignore frame-ancestors in a meta tag). */
export const PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html;charset=utf-8",
  "cache-control": "no-cache",
  "content-security-policy": "frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
};

export type PageRoute = (request: Request, server: Server<undefined>) => Promise<Response>;

/** The address this server answers itself on: a wildcard bind address is reached through loopback. */
function ownAddress(server: Server<undefined>): URL {
  const url = new URL(String(server.url));
  if (url.hostname === "0.0.0.0") url.hostname = "127.0.0.1";
  else if (url.hostname === "[::]") url.hostname = "[::1]";
  return url;
}

/** Static routes for `paths`, all showing `bundle`, plus the hidden route the bundle itself is served on. */
export function framedPageRoutes(bundle: HTMLBundle, paths: string[]): Record<string, HTMLBundle | PageRoute> {
  const hidden = `/_page-${randomBase62(32)}`;
  let html: Promise<string> | null = null;
  const load = async (server: Server<undefined>): Promise<string> => {
    const url = new URL(hidden, ownAddress(server));
    // Our own server (with TLS, its own certificate, possibly issued for another name than this address).
    const res = await fetch(url, { tls: { rejectUnauthorized: false } });
    if (!res.ok) throw new Error(`the web application's page answered ${res.status}`);
    return res.text();
  };
  const serve: PageRoute = async (_request, server) => {
    html ??= load(server);
    try {
      return new Response(await html, { headers: PAGE_HEADERS });
    } catch (e) {
      html = null;
      return errorResponse("internal_error", `the web application's page could not be loaded: ${(e as Error).message}`);
    }
  };
  return { [hidden]: bundle, ...Object.fromEntries(paths.map((p) => [p, serve])) };
}
