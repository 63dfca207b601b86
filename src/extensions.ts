// What runs inside `svc serve` beside the API: engines (runs, generation) and HTTP extensions (web
// application, health, metrics, downloads). Each module registers itself here when imported by src/modules.ts.
import type { OpenedCore } from "./core";
import type { AppOptions } from "./http/app";

export interface Engine {
  name: string;
  start(): void | Promise<void>;
  /** Stops taking work; resolves when in-flight work has finished or the grace period has passed. */
  stop(graceMs: number): Promise<void>;
}

export type EngineFactory = (core: OpenedCore) => Engine;
export type ExtensionFactory = (core: OpenedCore) => Pick<AppOptions, "plugins" | "sessions" | "onFinished">;

export const serverExtensions: { engines: EngineFactory[]; http: ExtensionFactory[] } = { engines: [], http: [] };
