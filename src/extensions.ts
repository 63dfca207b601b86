// What runs inside `svc serve` beside the API: engines (runs, generation) and HTTP extensions (web
// application, health, metrics, downloads). Each module registers itself here when imported by src/modules.ts.
import type { OpenedCore } from "./core";
import type { AppOptions } from "./http/app";
import type { HTMLBundle, Server } from "bun";

export interface Engine {
  name: string;
  start(): void | Promise<void>;
  /** Stops taking work; resolves when in-flight work has finished or the grace period has passed. */
  stop(graceMs: number): Promise<void>;
  /** False when the engine can no longer take work (e.g. its worker loop died); read by GET /readyz. */
  healthy?(): boolean;
}

export type EngineFactory = (core: OpenedCore) => Engine;
/** What an HTTP extension may observe of the running server beyond the core (the engines, once started). */
export interface ServerRuntime {
  engines(): readonly Engine[];
}
/** Routes Bun.serve answers itself before the HTTP service: the web application's bundled pages. */
export type StaticRoutes = Record<string, HTMLBundle | ((request: Request, server: Server<undefined>) => Promise<Response>)>;
export type ExtensionFactory = (
  core: OpenedCore,
  runtime: ServerRuntime,
) => Pick<AppOptions, "plugins" | "sessions" | "onFinished" | "ipBudgetExempt"> & { routes?: StaticRoutes };

export const serverExtensions: { engines: EngineFactory[]; http: ExtensionFactory[] } = { engines: [], http: [] };
