// The operations extension of `svc serve`: health, readiness, metrics and the CLI's install and download routes.
import { connectedRunnerCount } from "../../core/runners/operations";
import { runStatsReader } from "../../core/runs/stats";
import { serverExtensions } from "../../extensions";
import { downloadRoutes } from "./downloads";
import { healthRoutes } from "./health";
import { MetricsRegistry, metricsRoute } from "./metrics";

serverExtensions.http.push((core, runtime) => {
  const metrics = new MetricsRegistry();
  return {
    plugins: [
      healthRoutes(core, runtime),
      metricsRoute(metrics, runStatsReader(core.queue), () => connectedRunnerCount(core), core.config.metrics.token),
      downloadRoutes(core.config),
    ],
    onFinished: (request, response, durationMs) => metrics.observe(request, response, durationMs),
  };
});
