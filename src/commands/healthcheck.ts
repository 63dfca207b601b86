// `svc healthcheck`: whether the svc on this machine (or in this container) is healthy, as an exit code: the image's
// HEALTHCHECK. A server: its /healthz answers 200 at the address it listens on, over TLS when it serves TLS. A
// runner (it has no port): it runs and heard from its server within the last minute. Exit 0 healthy, 1 not (what
// Docker reads); one line says why.
import type { Command } from "commander";
import { UsageError } from "../../cli/usage";
import type { RunnerHealth } from "../runner/health-file";

const ANSWER_WITHIN_MS = 4_000;

export function registerHealthcheck(program: Command): void {
  program
    .command("healthcheck")
    .description("Exit 0 when the server (or the runner) on this machine is healthy, else 1: the container image's HEALTHCHECK")
    .option("--server", "check the server: GET /healthz on the address it listens on (default, unless a runner runs here)")
    .option("--runner", "check the runner: it runs and heard from its server within the last minute")
    .option("--host <host>", "the server's listening address (default: as svc serve: SVC_HOST, the config file, 127.0.0.1)")
    .option("--port <port>", "the server's port (default: as svc serve: SVC_PORT, the config file, 8080)")
    .option("--config <file>", "config file (TOML); also SVC_CONFIG")
    .action(async (o: { server?: boolean; runner?: boolean; host?: string; port?: string; config?: string }) => {
      if (o.server && o.runner) throw new UsageError("--server and --runner: give one of them, or neither to check what runs here");
      const { readRunnerHealth, runnerAlive } = await import("../runner/health-file");
      const health = readRunnerHealth();
      const runnerHere = health !== null && runnerAlive(health.pid) ? health : null;
      const verdict = o.runner || (!o.server && runnerHere) ? await runnerVerdict(runnerHere) : await serverVerdict(o);
      (verdict.healthy ? process.stdout : process.stderr).write(`${verdict.healthy ? "healthy" : "unhealthy"}: ${verdict.why}\n`);
      process.exit(verdict.healthy ? 0 : 1);
    });
}

interface Verdict {
  healthy: boolean;
  why: string;
}

/** `health`: what a live runner wrote, or null. */
async function runnerVerdict(health: RunnerHealth | null): Promise<Verdict> {
  const { RUNNER_SILENCE_MS, runnerHealthPath } = await import("../runner/health-file");
  if (health === null) return { healthy: false, why: `no runner runs here (none that reached its server has noted it in ${runnerHealthPath()})` };
  const silent = Date.now() - Date.parse(health.contact_at);
  const seconds = Math.max(0, Math.round(silent / 1000));
  if (silent > RUNNER_SILENCE_MS) {
    return { healthy: false, why: `the runner (pid ${health.pid}) has not heard from ${health.server} for ${seconds} s: see its log` };
  }
  return { healthy: true, why: `the runner (pid ${health.pid}) heard from ${health.server} ${seconds} s ago` };
}

async function serverVerdict(o: { host?: string; port?: string; config?: string }): Promise<Verdict> {
  const { ConfigError, loadConfig } = await import("../../config/load");
  const { listenerAddress } = await import("../core/address");
  let address: string;
  try {
    address = listenerAddress(loadConfig({ file: o.config, flags: { host: o.host, port: o.port } }));
  } catch (e) {
    if (e instanceof ConfigError) return { healthy: false, why: `the configuration cannot be read: ${e.message}` };
    throw e;
  }
  const url = `${address}/healthz`;
  try {
    // The server's own certificate is not checked: this asks a process on this machine whether it serves, and sends
    // nothing. A certificate only people elsewhere trust must not make a healthy server look down.
    const res = await fetch(url, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS), tls: { rejectUnauthorized: false }, redirect: "manual" });
    if (res.status === 200) return { healthy: true, why: `${url} answers 200` };
    return { healthy: false, why: `${url} answers ${res.status}` };
  } catch (e) {
    const err = e as Error & { code?: string };
    const why =
      err.name === "TimeoutError"
        ? `no answer within ${ANSWER_WITHIN_MS / 1000} s`
        : err.code === "ECONNREFUSED"
          ? "nothing listens there (connection refused)"
          : err.message;
    return { healthy: false, why: `${url}: ${why}` };
  }
}
