// GET /metrics: Prometheus text format — requests by route and status, latency histogram, runs by status,
// queue depth, rate-limit rejections and process memory — optionally behind a bearer token.
import { timingSafeEqual } from "node:crypto";
import type { Elysia } from "elysia";
import type { RunStats } from "../../core/runs/stats";
import { VERSION } from "../../version";
import { errorResponse } from "../errors";
import { requestState } from "../request-state";

/** Seconds; spans a cached key lookup (~1 ms) to a slow export (~10 s). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

/** Routes that are not manifest operations keep their path as label; anything else (web pages, unknown paths)
 * is folded into one label so that scanners cannot blow up the number of series. */
const FIXED_ROUTES = new Set(["/healthz", "/readyz", "/metrics", "/install.sh", "/download/svc", "/download/svc.sha256", "/api/v1/openapi.json"]);

export function routeLabel(request: Request): string {
  const op = requestState(request)?.operation;
  if (op) return op;
  const path = new URL(request.url).pathname;
  return FIXED_ROUTES.has(path) ? path : "other";
}

/** Any other token a client sends as a method is one label, for the same reason. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

export class MetricsRegistry {
  private readonly requests = new Map<string, number>();
  private readonly latency = new Map<string, Histogram>();
  private rateLimited = 0;
  private readonly startedAt = Date.now() / 1000;

  observe(request: Request, response: Response, durationMs: number): void {
    const route = routeLabel(request);
    const method = METHODS.has(request.method) ? request.method : "OTHER";
    const key = `${route}\u0000${method}\u0000${response.status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    if (response.status === 429) this.rateLimited++;
    let h = this.latency.get(route);
    if (!h) {
      h = { counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.latency.set(route, h);
    }
    const seconds = durationMs / 1000;
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= (BUCKETS[i] as number)) (h.counts[i] as number)++;
    h.sum += seconds;
    h.count++;
  }

  render(runs: RunStats): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

    family("svc_build_info", "gauge", "The running version of svc.");
    out.push(`svc_build_info{version="${escapeLabel(VERSION)}"} 1`);
    family("svc_http_requests_total", "counter", "HTTP requests by route (the operation name), method and status.");
    for (const [key, n] of [...this.requests].sort(([a], [b]) => a.localeCompare(b))) {
      const [route, method, status] = key.split("\u0000") as [string, string, string];
      out.push(`svc_http_requests_total{route="${escapeLabel(route)}",method="${method}",status="${status}"} ${n}`);
    }
    family("svc_http_request_duration_seconds", "histogram", "Time from request received to response ready, by route.");
    for (const [route, h] of [...this.latency].sort(([a], [b]) => a.localeCompare(b))) {
      const r = escapeLabel(route);
      BUCKETS.forEach((le, i) => out.push(`svc_http_request_duration_seconds_bucket{route="${r}",le="${le}"} ${h.counts[i]}`));
      out.push(`svc_http_request_duration_seconds_bucket{route="${r}",le="+Inf"} ${h.count}`);
      out.push(`svc_http_request_duration_seconds_sum{route="${r}"} ${h.sum}`);
      out.push(`svc_http_request_duration_seconds_count{route="${r}"} ${h.count}`);
    }
    family("svc_rate_limit_rejections_total", "counter", "Requests answered 429 rate_limited (per IP or per workspace).");
    out.push(`svc_rate_limit_rejections_total ${this.rateLimited}`);
    family("svc_runs", "gauge", "Runs in the database by status.");
    for (const [status, n] of Object.entries(runs.byStatus)) out.push(`svc_runs{status="${escapeLabel(status)}"} ${n}`);
    family("svc_run_queue_depth", "gauge", "Runs queued and waiting for a worker.");
    out.push(`svc_run_queue_depth ${runs.queueDepth}`);
    family("process_resident_memory_bytes", "gauge", "Resident memory of the svc process.");
    out.push(`process_resident_memory_bytes ${process.memoryUsage.rss()}`);
    family("process_start_time_seconds", "gauge", "When the process started, in seconds since the Unix epoch.");
    out.push(`process_start_time_seconds ${this.startedAt}`);
    return `${out.join("\n")}\n`;
  }
}

function tokenMatches(header: string | null, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? "");
  if (!m) return false;
  const given = Buffer.from((m[1] as string).trim());
  const wanted = Buffer.from(token);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

export function metricsRoute(registry: MetricsRegistry, readRuns: () => RunStats, token: string | undefined) {
  return (app: Elysia) =>
    app.get("/metrics", ({ request }) => {
      if (token && !tokenMatches(request.headers.get("authorization"), token)) {
        return errorResponse("unauthorized", "GET /metrics needs Authorization: Bearer <metrics.token>", {
          headers: { "www-authenticate": 'Bearer realm="metrics"' },
        });
      }
      return new Response(registry.render(readRuns()), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
    }) as unknown as Elysia;
}
