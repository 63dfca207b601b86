// GET /install.sh, GET /download/svc and GET /download/svc.sha256: registry-free installs of the CLI from the
// running server — the running executable itself when it matches the asked platform, else a cross-built one.
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Elysia } from "elysia";
import type { Config } from "../../../config/schema";
import { errorResponse } from "../errors";
import { cliInstallScript } from "./cli-install-script";
import { publicBaseUrl } from "../public-url";

const OSES = ["linux", "darwin"] as const;
const ARCHES = ["x64", "arm64"] as const;

interface Platform {
  os: (typeof OSES)[number];
  arch: (typeof ARCHES)[number];
}

interface Located {
  path: string;
  name: string;
}

/** Only a compiled svc is a CLI; under `bun run` the process is the Bun runtime and must not be served. */
const isCompiled = () => process.env.SVC_COMPILED === "1";

export function parsePlatform(url: URL): Platform | Response {
  const os = url.searchParams.get("os") ?? process.platform;
  const arch = url.searchParams.get("arch") ?? process.arch;
  const details: { path: string; message: string }[] = [];
  if (!OSES.includes(os as Platform["os"])) details.push({ path: "os", message: `must be one of ${OSES.join(", ")}` });
  if (!ARCHES.includes(arch as Platform["arch"])) details.push({ path: "arch", message: `must be one of ${ARCHES.join(", ")}` });
  if (details.length > 0) {
    return errorResponse("invalid_request", `unknown platform ${os}-${arch}: use os=linux|darwin and arch=x64|arm64`, { details });
  }
  return { os: os as Platform["os"], arch: arch as Platform["arch"] };
}

/** Where cross-built executables are looked for: first <data_dir>/downloads (where an operator drops them), then
 * beside the running executable (dist/ after `bun run build -- --cross`). */
export function downloadDirs(config: Config): string[] {
  const dirs = [join(config.data_dir, "downloads")];
  if (isCompiled()) dirs.push(dirname(process.execPath));
  return dirs;
}

export function locateExecutable(config: Config, p: Platform): Located | null {
  const name = `svc-${p.os}-${p.arch}`;
  if (isCompiled() && process.platform === p.os && process.arch === p.arch) return { path: process.execPath, name };
  for (const dir of downloadDirs(config)) {
    const path = join(dir, name);
    if (existsSync(path) && statSync(path).isFile()) return { path, name };
  }
  return null;
}

/** Hashes are cached by file identity: the executable is ~100 MB and is hashed by streaming, once. */
const hashCache = new Map<string, { stamp: string; hex: string }>();

async function sha256Of(path: string): Promise<string> {
  const st = statSync(path);
  const stamp = `${st.size}:${st.mtimeMs}`;
  const cached = hashCache.get(path);
  if (cached?.stamp === stamp) return cached.hex;
  const hasher = new Bun.CryptoHasher("sha256");
  for await (const chunk of Bun.file(path).stream()) hasher.update(chunk);
  const hex = hasher.digest("hex");
  hashCache.set(path, { stamp, hex });
  return hex;
}

function notAvailable(config: Config, p: Platform): Response {
  const where = downloadDirs(config).join(" or ");
  return errorResponse(
    "not_found",
    `this server has no svc executable for ${p.os}-${p.arch}; build one with \`bun run build -- --cross\` and put svc-${p.os}-${p.arch} in ${where}`,
  );
}

/** The URL clients reach this server at: the configured base_url, else what the request itself says. */
export function downloadRoutes(config: Config) {
  return (app: Elysia) =>
    app
      .get(
        "/install.sh",
        ({ request }) =>
          new Response(cliInstallScript(publicBaseUrl(config, request)), {
            headers: { "content-type": "text/x-shellscript; charset=utf-8", "cache-control": "no-store" },
          }),
      )
      .get("/download/svc", ({ request }) => {
        const p = parsePlatform(new URL(request.url));
        if (p instanceof Response) return p;
        const found = locateExecutable(config, p);
        if (!found) return notAvailable(config, p);
        return new Response(Bun.file(found.path), {
          headers: {
            "content-type": "application/octet-stream",
            "content-disposition": `attachment; filename="${found.name}"`,
            "x-content-type-options": "nosniff",
          },
        });
      })
      .get("/download/svc.sha256", async ({ request }) => {
        const p = parsePlatform(new URL(request.url));
        if (p instanceof Response) return p;
        const found = locateExecutable(config, p);
        if (!found) return notAvailable(config, p);
        return new Response(`${await sha256Of(found.path)}  ${found.name}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
      }) as unknown as Elysia;
}
