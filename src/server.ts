// `svc serve`: opens the core, starts the HTTP service and the engines, and drains on SIGTERM.
import type { Server } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { ConfigError } from "../config/load";
import type { Config } from "../config/schema";
import { openCore, type OpenedCore } from "./core";
import { anyUserExists } from "./core/sessions/setup";
import { moveDiskArtifactsIn } from "./core/runs/artifacts";
import { createHttpService } from "./http/app";
import { type Engine, serverExtensions } from "./extensions";
import { DataDirInUse, holdDataDir } from "./data-dir-lock";
import { log, setLogLevel } from "./logging";
import { MAX_WAIT_SECONDS } from "./manifest/define";

export interface RunningServer {
  url: string;
  port: number;
  core: OpenedCore;
  server: Server<undefined>;
  stop(): Promise<void>;
}

/**
 * The client's address: the socket's, or behind a trusted proxy the LAST X-Forwarded-For entry — the one the
 * proxy itself appended. Earlier entries come from the client and could be anything (a rotating fake address
 * would otherwise escape the per-IP limit).
 */
function clientIp(config: Config, request: Request, server: Server<undefined>): string {
  if (config.trust_proxy) {
    const fwd = request.headers.get("x-forwarded-for");
    const last = fwd?.slice(fwd.lastIndexOf(",") + 1).trim();
    if (last) return last;
  }
  return server.requestIP(request)?.address ?? "unknown";
}

/** A TLS file's text, or a configuration error naming the setting and why it cannot be read. */
function readTlsFile(setting: "cert" | "key", path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(`tls.${setting}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/**
 * Holds an existing data directory before its database is opened: opening applies pending migrations, which must
 * not change the schema under another svc serve still running on it (say, the older version beside a newer one
 * started by mistake). Null when it cannot be noted yet (no directory, or one that cannot be written): opening
 * then makes the directory or says what is wrong with it, and the server holds it right after.
 */
function holdBeforeOpening(dataDir: string): (() => void) | null {
  if (!existsSync(dataDir)) return null;
  try {
    return holdDataDir(dataDir);
  } catch (e) {
    if (e instanceof DataDirInUse) throw e;
    return null;
  }
}

/**
 * Why the server cannot listen where it is told to, naming the settings to change; null for other errors. The port
 * taken keeps its code, so that it is told (and exits) as before: "the port is already in use".
 */
function listenProblem(config: Config, e: unknown): Error | null {
  const code = (e as { code?: string }).code ?? "";
  const where = `${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`;
  if (code === "EADDRINUSE" || /in use/i.test((e as Error).message ?? "")) {
    return Object.assign(new Error(`${where}: another process listens there; stop it, or choose another port (--port, SVC_PORT or port in the config file)`), {
      code: "EADDRINUSE",
    });
  }
  if (["EADDRNOTAVAIL", "EINVAL", "ENOTFOUND", "EAFNOSUPPORT"].includes(code))
    return new Error(
      `cannot listen on ${where} (${code}): host (--host, SVC_HOST or host in the config file) must be an address of this machine, such as 127.0.0.1, or 0.0.0.0 for every interface`,
    );
  if (code === "EACCES" && config.port > 0 && config.port < 1024)
    return new Error(
      `cannot listen on ${where} (EACCES): ports below 1024 need privileges; choose a port from 1024 up (--port, SVC_PORT or port in the config file) and put a reverse proxy in front`,
    );
  return null;
}

/** Longer than the longest wait (MAX_WAIT_SECONDS), with room for the read that ends it. */
const LONG_POLL_IDLE_SECONDS = MAX_WAIT_SECONDS + 15;

export async function startServer(config: Config): Promise<RunningServer> {
  setLogLevel(config.log_level);
  await import("./modules");
  // On SQLite the file is this process's alone (PostgreSQL's nodes share their database by design).
  const sqlite = !config.database.url;
  let letGo = sqlite ? holdBeforeOpening(config.data_dir) : null;
  const core = await openCore(config, { serving: true }).catch((e: unknown) => {
    letGo?.();
    throw e;
  });
  if (sqlite && letGo === null) {
    try {
      letGo = holdDataDir(config.data_dir);
    } catch (e) {
      await core.close();
      throw e;
    }
  }
  await moveDiskArtifactsIn(core.db, config.data_dir);
  core.keys.startFlushing();
  let engines: Engine[] = [];
  const extensions = serverExtensions.http.map((f) => f(core, { engines: () => engines }));
  const service = createHttpService({
    core,
    plugins: extensions.flatMap((e) => e.plugins ?? []),
    sessions: extensions.find((e) => e.sessions)?.sessions,
    onFinished: (req, res, ms) => {
      for (const e of extensions) e.onFinished?.(req, res, ms);
    },
    // One extension speaks for its own routes (the runner protocol's).
    ipBudgetExempt: extensions.find((e) => e.ipBudgetExempt)?.ipBudgetExempt,
  });
  const tls = config.tls.cert && config.tls.key ? { cert: readTlsFile("cert", config.tls.cert), key: readTlsFile("key", config.tls.key) } : undefined;
  let server: Server<undefined>;
  try {
    server = Bun.serve({
      hostname: config.host,
      port: config.port,
      tls,
      // Bundled pages are served in production mode (no hot reload), also when run from source.
      development: false,
      // A second server on this port is refused (EADDRINUSE), not given half the connections.
      reusePort: false,
      routes: Object.assign({}, ...extensions.map((e) => e.routes ?? {})),
      // Bodies are limited by our own reader (readBodyLimited: refused by Content-Length before reading, or cut
      // off while streaming), so every refusal is a JSON 413; Bun's own limit only has to stay out of the way.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch: (request, srv) => {
        // A long-poll is silent for up to its wait: Bun's idle timeout (10 s) must not cut it off.
        if (request.url.includes("wait=")) srv.timeout(request, LONG_POLL_IDLE_SECONDS);
        return service.fetch(request, clientIp(config, request, srv));
      },
    });
  } catch (e) {
    await core.close();
    letGo?.();
    const listening = listenProblem(config, e);
    if (listening) throw listening;
    // OpenSSL's own words (NO_START_LINE, key values mismatch) name no setting: say which ones to look at.
    if (tls && !/EADDRINUSE|in use/i.test(`${(e as { code?: string }).code} ${(e as Error).message}`))
      throw new ConfigError(
        `tls.cert and tls.key cannot be used (${(e as Error).message}): tls.cert must be the PEM certificate (chain) and tls.key its PEM private key`,
      );
    throw e;
  }
  // Port 0 asks the OS for a free port: links the server hands out (alerts, password setup) name the one it got.
  if (config.port === 0 && server.port !== undefined) config.port = server.port;
  engines = serverExtensions.engines.map((f) => f(core));
  for (const e of engines) await e.start();
  const url = `${tls ? "https" : "http"}://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  log.info("listening", { url, data_dir: config.data_dir });
  // A fresh installation has no one to sign in: say how the first owner is made, where the operator looks first.
  if (!(await anyUserExists(core.db)))
    log.info("no user yet: open the web application on this machine (or at base_url) to set up the first owner, or run svc admin create-user", {
      url: config.base_url ?? url,
    });
  let stopping: Promise<void> | null = null;
  return {
    url,
    port: server.port ?? config.port,
    core,
    server,
    stop() {
      stopping ??= (async () => {
        // Waiting reads and runners' long-polls answer now, so draining the open requests does not wait for them;
        // no run is handed to a runner and no runner's lease is ended while this server stops.
        core.events.emit("closing");
        core.waits.close();
        await server.stop(false);
        await Promise.all(engines.map((e) => e.stop(config.runner.shutdown_grace_ms)));
        await core.close();
        letGo?.();
        log.info("stopped");
      })();
      return stopping;
    },
  };
}
