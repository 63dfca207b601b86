// The web application's pages, served with the headers that keep them out of other sites' frames.
// Bun answers a route holding a bundled HTML page itself and cannot add headers to it, so the bundle sits on
// an unguessable route of this same server; its HTML is fetched from there once and served on the real paths
// with the headers. The scripts, styles and icon it refers to are read from Bun's routes once too, and served
// compressed under hashed names (assets.ts).
import type { HTMLBundle, Server } from "bun";
import { randomBase62 } from "../../security/ids";
import { errorResponse } from "../errors";
import { ASSET_PREFIX, type Asset, assetNotFound, assetResponse, compressAsset, hashedName } from "./assets";

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

interface Loaded {
  html: string;
  /** By the name the page refers to them by (under ASSET_PREFIX); compressed while the page is on its way. */
  assets: Map<string, Promise<Asset>>;
  /** The icon, also answered at /favicon.ico for clients that ask there without reading the page. */
  icon: Promise<Asset> | null;
}

/** Local references of the page to its scripts, styles and icon (the bundle's own routes). */
const REFERENCE = /\b(src|href)="(\/[^"/][^"]*)"/g;

/**
 * Static routes for `paths`, all showing `bundle`, plus the hidden route the bundle itself is served on, and the
 * bundle's scripts, styles and icon compressed under hashed names (ASSET_PREFIX) and at /favicon.ico.
 */
export function framedPageRoutes(bundle: HTMLBundle, paths: string[]): Record<string, HTMLBundle | PageRoute> {
  const hidden = `/_page-${randomBase62(32)}`;
  let loaded: Promise<Loaded> | null = null;
  const fetchOwn = async (server: Server<undefined>, path: string): Promise<Response> => {
    // Our own server (with TLS, its own certificate, possibly issued for another name than this address).
    const res = await fetch(new URL(path, ownAddress(server)), { tls: { rejectUnauthorized: false }, headers: { "accept-encoding": "identity" } });
    if (!res.ok) throw new Error(`the web application's ${path} answered ${res.status}`);
    return res;
  };
  const load = async (server: Server<undefined>): Promise<Loaded> => {
    const page = await (await fetchOwn(server, hidden)).text();
    const assets = new Map<string, Promise<Asset>>();
    const renamed = new Map<string, string>();
    let icon: Promise<Asset> | null = null;
    for (const [, , path] of page.matchAll(REFERENCE)) {
      if (!path || renamed.has(path)) continue;
      const res = await fetchOwn(server, path);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const type = res.headers.get("content-type") ?? "application/octet-stream";
      const { name, hash } = hashedName(path, bytes);
      const asset = compressAsset(type, bytes, hash);
      // Awaited by the asset's requests; a failure is theirs to report.
      asset.catch(() => undefined);
      assets.set(name, asset);
      renamed.set(path, `${ASSET_PREFIX}${name}`);
      if (type.startsWith("image/")) icon ??= asset;
    }
    const html = page.replace(REFERENCE, (all, attr: string, path: string) => {
      const to = renamed.get(path);
      return to ? `${attr}="${to}"` : all;
    });
    return { html, assets, icon };
  };
  const get = (server: Server<undefined>): Promise<Loaded> => {
    const now = (loaded ??= load(server));
    now.catch(() => {
      if (loaded === now) loaded = null;
    });
    return now;
  };
  const serve: PageRoute = async (_request, server) => {
    try {
      return new Response((await get(server)).html, { headers: PAGE_HEADERS });
    } catch (e) {
      return errorResponse("internal_error", `the web application's page could not be loaded: ${(e as Error).message}`);
    }
  };
  const asset: PageRoute = async (request, server) => {
    const path = new URL(request.url).pathname;
    try {
      const found = (await get(server)).assets.get(path.slice(ASSET_PREFIX.length));
      return found ? assetResponse(await found, request) : assetNotFound(path);
    } catch (e) {
      return errorResponse("internal_error", `the web application's assets could not be loaded: ${(e as Error).message}`);
    }
  };
  const favicon: PageRoute = async (request, server) => {
    try {
      const icon = (await get(server)).icon;
      if (!icon) return assetNotFound("/favicon.ico");
      // Not hashed: kept a day, then asked again.
      const res = assetResponse(await icon, request);
      res.headers.set("cache-control", "public, max-age=86400");
      return res;
    } catch (e) {
      return errorResponse("internal_error", `the web application's icon could not be loaded: ${(e as Error).message}`);
    }
  };
  return {
    [hidden]: bundle,
    [`${ASSET_PREFIX}*`]: asset,
    "/favicon.ico": favicon,
    ...Object.fromEntries(paths.map((p) => [p, serve])),
  };
}
