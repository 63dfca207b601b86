// Registers `svc mcp` on the root; the server and the SDK load only when the command runs.
import type { Command } from "commander";

export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .description("Serve the API as MCP tools over stdio, for AI assistants (an HTTP client of a running svc)")
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json or the saved login)")
    .option("--project <project>", "default project for tools that take one")
    .option("--read-only", "offer only the tools that change nothing")
    .option("--toolsets <list>", "comma-separated toolsets to offer (default: all but admin; `all` for every one)")
    .action(async (o: { server?: string; project?: string; readOnly?: boolean; toolsets?: string }) => {
      const { SettingsError } = await import("../src/client/settings");
      const { startMcp } = await import("./server");
      try {
        const code = await startMcp(o);
        if (code !== 0) process.exit(code);
      } catch (e) {
        if (e instanceof SettingsError) {
          process.stderr.write(`svc mcp: ${e.message}\n`);
          process.exit(2);
        }
        throw e;
      }
    });
}
