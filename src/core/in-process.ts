// The core's own call path (call.ts), reachable from an operation that calls other operations (the assistant)
// without importing call.ts, which binds every handler: call.ts registers itself here when it loads.
import type { OperationKey } from "./registry";
import type { Principal } from "./context";
import type { Core } from "./context";

export type InProcessCall = (
  core: Core,
  principal: Principal,
  key: OperationKey,
  raw: { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown },
  options?: { publicUrl?: () => string; idempotencyKey?: string; ifMatch?: string },
) => Promise<unknown>;

let registered: InProcessCall | null = null;

export function registerInProcessCall(call: InProcessCall): void {
  registered = call;
}

export function inProcessCall(): InProcessCall {
  if (!registered) throw new Error("the core's call path is not loaded");
  return registered;
}
