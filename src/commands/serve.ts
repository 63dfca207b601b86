// `svc serve`: the service itself.
import { resolve } from "node:path";
import type { Command } from "commander";
import { flushLogs, log, setLogLevel } from "../logging";

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Run the service: REST API, web application, run and generation engines")
    .option("--host <host>", "address to listen on (default 127.0.0.1)")
    .option("--port <port>", "port to listen on (default 8080)")
    .option("--data-dir <dir>", "data directory (default ./svc-data)")
    .option("--config <file>", "config file (TOML); also SVC_CONFIG")
    .action(async (o: { host?: string; port?: string; dataDir?: string; config?: string }) => {
      const { loadConfig, unknownEnvVariables } = await import("../../config/load");
      const { startServer } = await import("../server");
      const { hideFromWorkers } = await import("../runner/worker-pool");
      const config = loadConfig({ file: o.config, flags: { host: o.host, port: o.port, data_dir: o.dataDir } });
      setLogLevel(config.log_level);
      // A misspelt variable (SVC_PROT) leaves its setting as it was: said at start, since nothing else would show it.
      for (const { name, guess } of unknownEnvVariables())
        log.warn(`${name} is not a setting of svc serve and is ignored${guess ? `: did you mean ${guess}?` : ""}`, { variable: name });
      // The config file may hold the database URL's password, SMTP and LLM credentials: run workers must not read it.
      const file = o.config ?? process.env.SVC_CONFIG;
      if (file) hideFromWorkers(resolve(file));
      const running = await startServer(config);
      let signalled = false;
      const shutdown = async (signal: string) => {
        if (signalled) return;
        signalled = true;
        flushLogs(); // what was logged before the signal comes before this line
        process.stderr.write(`svc: ${signal} received, draining\n`);
        await running.stop();
        process.exit(0);
      };
      process.on("SIGTERM", () => void shutdown("SIGTERM"));
      process.on("SIGINT", () => void shutdown("SIGINT"));
      // Said once a signal drains it: whoever waits for this line (systemd, a script, a test) may stop it at once.
      process.stderr.write(`svc listening on ${running.url}\n`);
    });
}
