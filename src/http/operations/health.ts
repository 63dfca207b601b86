// GET /healthz (the process answers) and GET /readyz (what src/core/health.ts finds: database writable, disk
// not full, migrations applied, engines alive), both without authentication so that load balancers, systemd
// checks and Docker HEALTHCHECK can use them.
import type { Elysia } from "elysia";
import type { Core } from "../../core/context";
import { readiness } from "../../core/health";
import type { ServerRuntime } from "../../extensions";

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });

export function healthRoutes(core: Core, runtime: ServerRuntime) {
  return (app: Elysia) =>
    app
      .get("/healthz", () => json(200, { status: "ok" }))
      .get("/readyz", async () => {
        const { ready, checks, failing } = await readiness(core, runtime.engines());
        if (ready) return json(200, { status: "ready", checks });
        return json(503, { error: "unavailable", message: `not ready: ${failing.join("; ")}`, status: "unavailable", checks });
      }) as unknown as Elysia;
}
