// The web application's scripts, styles and icon: read once from the bundle Bun built, compressed once (brotli and
// gzip, as the browser accepts), and served under names carrying a hash of their content, so a browser keeps them a
// year without asking again; the page that names them is `no-cache`, so a new version is picked up at once.
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { errorResponse } from "../errors";

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

export const ASSET_PREFIX = "/assets/";
export const IMMUTABLE = "public, max-age=31536000, immutable";

export interface Asset {
  type: string;
  etag: string;
  identity: Uint8Array<ArrayBuffer>;
  br: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
}

/** `chunk-m8kgarvh.css` with content hash 1a2b3c4d5e → `chunk-m8kgarvh.1a2b3c4d5e.css`. */
export function hashedName(original: string, bytes: Uint8Array): { name: string; hash: string } {
  const hash = createHash("sha256").update(bytes).digest("base64url").replace(/[-_]/g, "").slice(0, 10).toLowerCase();
  const file = original.split("/").pop() ?? "asset";
  const dot = file.lastIndexOf(".");
  const name = dot > 0 ? `${file.slice(0, dot)}.${hash}${file.slice(dot)}` : `${file}.${hash}`;
  return { name, hash };
}

/** Brotli's quality 11 is 7% smaller than 9 but takes over ten times as long (seconds for the script). */
const BROTLI_QUALITY = 9;

/** Both compressed forms of an asset, made off the event loop (zlib's thread pool). */
export async function compressAsset(type: string, bytes: Uint8Array<ArrayBuffer>, hash: string): Promise<Asset> {
  const [br, gz] = await Promise.all([
    brotli(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
    gzipped(bytes, { level: 9 }),
  ]);
  return { type, etag: `"${hash}"`, identity: bytes, br: new Uint8Array(br), gzip: new Uint8Array(gz) };
}

/** The encoding to answer with: brotli when accepted, else gzip, else none (a q=0 refuses one). */
export function chooseEncoding(acceptEncoding: string | null): "br" | "gzip" | null {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? "").split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((x) => x !== undefined);
    accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const weight = (e: string) => accepted.get(e) ?? accepted.get("*") ?? 0;
  if (weight("br") > 0) return "br";
  if (weight("gzip") > 0) return "gzip";
  return null;
}

/** One asset's response for a request: compressed as accepted, cached for a year, 304 when the browser has it. */
export function assetResponse(asset: Asset, request: Request): Response {
  const headers: Record<string, string> = {
    "content-type": asset.type,
    "cache-control": IMMUTABLE,
    etag: asset.etag,
    vary: "Accept-Encoding",
    "x-content-type-options": "nosniff",
  };
  if (request.headers.get("if-none-match") === asset.etag) return new Response(null, { status: 304, headers });
  const encoding = chooseEncoding(request.headers.get("accept-encoding"));
  const body = encoding === "br" ? asset.br : encoding === "gzip" ? asset.gzip : asset.identity;
  if (encoding) headers["content-encoding"] = encoding;
  return new Response(request.method === "HEAD" ? null : body, { headers: { ...headers, "content-length": String(body.length) } });
}

export const assetNotFound = (path: string) => errorResponse("not_found", `there is no asset at ${path}: the page may be from an older version, reload it`);
