// `svc init`: writes the project-level `.svc.json` (server and project defaults, meant to be committed). It
// never holds a key; `svc login` or SVC_API_KEY provide that.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { UsageError } from "./usage";
import { runCommand } from "./session";

export function registerInit(program: Command): void {
  program
    .command("init")
    .description("Write .svc.json here with the server and project defaults for this repository (never a key)")
    .requiredOption("--server <url>", "the svc server's URL, e.g. https://svc.example.com")
    .option("--project <project>", "the default project (id or slug)")
    .option("--force", "replace an existing .svc.json")
    .action((o: { server: string; project?: string; force?: boolean }) =>
      runCommand(async () => {
        let server: URL;
        try {
          server = new URL(o.server);
        } catch {
          throw new UsageError(`--server "${o.server}" is not a URL (e.g. https://svc.example.com)`);
        }
        if (server.protocol !== "http:" && server.protocol !== "https:") throw new UsageError("--server must be an http(s) URL");
        if (server.username || server.password) throw new UsageError("--server must not carry credentials: .svc.json is meant to be committed");
        const file = join(process.cwd(), ".svc.json");
        if (existsSync(file) && !o.force) throw new UsageError(`${file} exists already; pass --force to replace it`);
        const content = { server: server.href.replace(/\/+$/, ""), ...(o.project ? { project: o.project } : {}) };
        writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`);
        process.stderr.write(`wrote ${file}: commit it; keys come from \`svc login\` or SVC_API_KEY, never from this file\n`);
        return 0;
      }),
    );
}
