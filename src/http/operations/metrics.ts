// GET /metrics: Prometheus text format — requests by route and status, latency histogram, runs by status,
// queue depth, connected runners, rate-limit rejections and process memory — optionally behind a bearer token.
import { timingSafeEqual } from "node:crypto";
import type { Elysia } from "elysia";
import type { RunStats } from "../../core/runs/stats";
import { VERSION } from "../../version";
import { errorResponse } from "../errors";
import { requestState } from "../request-state";

/** Seconds; spans a cached key lookup (~1 ms) to a slow export (~10 s). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What one route label has seen: requests by method and status, and its latency histogram. */
interface RouteStats {
  /** Per method (index in METHOD_LABELS): count per status code. */
  byMethod: Map<number, number>[];
  /** Per bucket (non-cumulative; the last one is +Inf); the rendering adds them up. */
  buckets: number[];
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

/** Any other token a client sends as a method is one label ("OTHER", the last), for the same reason. */
const METHOD_LABELS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER"];
const methodIndex = (method: string) => {
  const i = METHOD_LABELS.indexOf(method);
  return i < 0 ? METHOD_LABELS.length - 1 : i;
};

/** The index of the first bucket holding `seconds` (BUCKETS.length for +Inf). */
function bucketIndex(seconds: number): number {
  let i = 0;
  while (i < BUCKETS.length && seconds > (BUCKETS[i] as number)) i++;
  return i;
}

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

export class MetricsRegistry {
  private readonly routes = new Map<string, RouteStats>();
  private rateLimited = 0;
  private readonly startedAt = Date.now() / 1000;

  observe(request: Request, response: Response, durationMs: number): void {
    const route = routeLabel(request);
    let r = this.routes.get(route);
    if (!r) {
      r = { byMethod: METHOD_LABELS.map(() => new Map()), buckets: [...BUCKETS, Infinity].map(() => 0), sum: 0, count: 0 };
      this.routes.set(route, r);
    }
    const statuses = r.byMethod[methodIndex(request.method)] as Map<number, number>;
    const status = response.status;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (status === 429) this.rateLimited++;
    const seconds = durationMs / 1000;
    (r.buckets[bucketIndex(seconds)] as number)++;
    r.sum += seconds;
    r.count++;
  }

  render(runs: RunStats, runnersConnected: number): string {
    const out: string[] = [];
    const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);

    family("svc_build_info", "gauge", "The running version of svc.");
    out.push(`svc_build_info{version="${escapeLabel(VERSION)}"} 1`);
    family("svc_http_requests_total", "counter", "HTTP requests by route (the operation name), method and status.");
    const routes = [...this.routes].sort(([a], [b]) => a.localeCompare(b));
    for (const [route, r] of routes) {
      const label = escapeLabel(route);
      r.byMethod.forEach((statuses, m) => {
        for (const [status, n] of [...statuses].sort(([a], [b]) => a - b)) {
          out.push(`svc_http_requests_total{route="${label}",method="${METHOD_LABELS[m]}",status="${status}"} ${n}`);
        }
      });
    }
    family("svc_http_request_duration_seconds", "histogram", "Time from request received to response ready, by route.");
    for (const [route, r] of routes) {
      const label = escapeLabel(route);
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += r.buckets[i] as number;
        out.push(`svc_http_request_duration_seconds_bucket{route="${label}",le="${le}"} ${cumulative}`);
      });
      out.push(`svc_http_request_duration_seconds_bucket{route="${label}",le="+Inf"} ${r.count}`);
      out.push(`svc_http_request_duration_seconds_sum{route="${label}"} ${r.sum}`);
      out.push(`svc_http_request_duration_seconds_count{route="${label}"} ${r.count}`);
    }
    family("svc_rate_limit_rejections_total", "counter", "Requests answered 429 rate_limited (per IP or per workspace).");
    out.push(`svc_rate_limit_rejections_total ${this.rateLimited}`);
    family("svc_runs", "gauge", "Runs in the database by status.");
    for (const [status, n] of Object.entries(runs.byStatus)) out.push(`svc_runs{status="${escapeLabel(status)}"} ${n}`);
    family("svc_run_queue_depth", "gauge", "Runs queued and waiting for a worker.");
    out.push(`svc_run_queue_depth ${runs.queueDepth}`);
    family(
      "svc_runners_connected",
      "gauge",
      "Runners (svc runner) heard from within a lease, revoked ones left out: with runner.local = false, none connected means queued runs wait.",
    );
    out.push(`svc_runners_connected ${runnersConnected}`);
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

export function metricsRoute(
  registry: MetricsRegistry,
  readRuns: () => Promise<RunStats>,
  readRunnersConnected: () => Promise<number>,
  token: string | undefined,
) {
  return (app: Elysia) =>
    app.get("/metrics", async ({ request }) => {
      if (token && !tokenMatches(request.headers.get("authorization"), token)) {
        return errorResponse("unauthorized", "GET /metrics needs Authorization: Bearer <metrics.token>", {
          headers: { "www-authenticate": 'Bearer realm="metrics"' },
        });
      }
      return new Response(registry.render(await readRuns(), await readRunnersConnected()), {
        headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
      });
    }) as unknown as Elysia;
}
