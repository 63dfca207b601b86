// Runs the compiled executable dist/svc: one-shot commands and a `svc serve` process on a free port.
import { chmodSync, copyFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { waitUntil } from "./wait";

export const BINARY = resolve(import.meta.dir, "../../dist/svc");

export function requireBinary(): void {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`bun run build\` first (npm test does)`);
}

/** A copy of the executable in `dir` (as an install puts it, reachable by whoever owns `dir`); answers its path. */
export function copyBinary(dir: string): string {
  requireBinary();
  const path = join(dir, "svc");
  copyFileSync(BINARY, path);
  chmodSync(path, 0o755);
  return path;
}

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runBinary(args: string[], opts: { cwd?: string; env?: Record<string, string>; stdin?: string } = {}): Promise<CommandResult> {
  requireBinary();
  const proc = Bun.spawn([BINARY, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...opts.env },
    stdin: opts.stdin !== undefined ? new TextEncoder().encode(opts.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

export interface ServeProcess {
  url: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the process wrote to stderr so far. */
  logs(): string;
  /** The logs once they contain `text` (log lines are written in batches and arrive through a pipe), else as they are after `ms`. */
  logsWith(text: string, ms?: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface ServeOptions {
  cwd?: string;
  /** Environment variables, over the ones the other options set. */
  env?: Record<string, string>;
  /** What runs `serve` instead of the binary: e.g. the source through bun. */
  command?: string[];
  /** The PostgreSQL database (SVC_DATABASE_URL): nodes started on one URL are nodes of one service. */
  databaseUrl?: string;
  /** The secrets key file (SVC_SECRETS_KEY_FILE): nodes of one database share it to read each other's sealed secrets. */
  secretsKeyFile?: string;
}

/** Starts `svc serve --port 0` (the binary, or `command`: e.g. the source through bun) and waits for its "listening on" line. */
export async function startServe(args: string[], opts: ServeOptions = {}): Promise<ServeProcess> {
  if (!opts.command) requireBinary();
  const proc = Bun.spawn([...(opts.command ?? [BINARY]), "serve", "--port", "0", ...args], {
    cwd: opts.cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      ...(opts.databaseUrl !== undefined ? { SVC_DATABASE_URL: opts.databaseUrl } : {}),
      ...(opts.secretsKeyFile !== undefined ? { SVC_SECRETS_KEY_FILE: opts.secretsKeyFile } : {}),
      ...opts.env,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let buffer = "";
  const reader = proc.stderr.getReader();
  const decoder = new TextDecoder();
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc serve did not start: ${buffer}`)), 15_000);
    (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value);
        const m = /svc listening on (\S+)/.exec(buffer);
        if (m?.[1]) {
          clearTimeout(timer);
          resolveUrl(m[1]);
        }
      }
      clearTimeout(timer);
      reject(new Error(`svc serve exited: ${buffer}`));
    })().catch(() => {});
  });
  // Keep draining stderr so the process never blocks on a full pipe.
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value);
    }
  })().catch(() => {});
  return {
    url,
    proc,
    logs: () => buffer,
    async logsWith(text: string, ms = 3_000) {
      await waitUntil(() => buffer.includes(text), ms);
      return buffer;
    },
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      proc.kill(signal);
      return proc.exited;
    },
  };
}

/** A JSON client of a running server's API with a key: answers parsed, any other status than expected thrown. */
export function apiClient(url: string, key: string) {
  return async <T>(method: string, path: string, body?: unknown, status = 200): Promise<T> => {
    const res = await fetch(`${url}/api/v1/ops${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    if (res.status !== status) throw new Error(`${method} ${path}: expected ${status}, got ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
}
