// Runs the CLI from source (`bun src/main.ts`) in a sandbox of its own: the same program the binary is built from,
// without building it first.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { CommandResult } from "./binary";
import { tempDir } from "./server";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

export interface SourceCli {
  cwd: string;
  run(args: string[]): Promise<CommandResult>;
  remove(): void;
}

/** `env` is all the CLI sees besides PATH, HOME and XDG_CONFIG_HOME (no inherited SVC_*); stdout is not a TTY. */
export function sourceCli(env: Record<string, string>): SourceCli {
  const root = tempDir("svc-cli-src-");
  const cwd = join(root, "repo");
  mkdirSync(cwd, { recursive: true });
  return {
    cwd,
    async run(args) {
      const proc = Bun.spawn([process.execPath, MAIN, ...args], {
        cwd,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root, XDG_CONFIG_HOME: join(root, "config"), ...env },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { code, stdout, stderr };
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
