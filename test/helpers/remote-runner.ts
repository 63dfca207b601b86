// Starts `svc runner` from source (`bun src/main.ts runner`) against a test server, and talks the runner
// protocol directly where a test plays a runner that misbehaves (claims and dies).
import { join } from "node:path";
import type { Server, Subprocess } from "bun";
import { RUNNER_INSTANCE_HEADER } from "../../src/manifest/runner-protocol";
import { tempDir } from "./server";
import { waitUntil } from "./wait";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

export interface RunnerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything it wrote to stderr (its JSON log lines) and stdout so far. */
  output(): string;
  /** Waits until its output contains `text`; says whether it did. */
  waitFor(text: string, ms?: number): Promise<boolean>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export function startRunnerProcess(server: string, token: string, args: string[] = [], env: Record<string, string> = {}): RunnerProcess {
  const home = tempDir("svc-runner-");
  const proc = Bun.spawn([process.execPath, MAIN, "runner", "--server", server, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, SVC_RUNNER_TOKEN: token, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  for (const stream of [proc.stdout, proc.stderr]) {
    (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) text += decoder.decode(chunk);
    })().catch(() => {});
  }
  return {
    proc,
    output: () => text,
    waitFor: (needle, ms = 15_000) => waitUntil(() => text.includes(needle), ms),
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return proc.exited;
    },
  };
}

/** One call of the runner protocol with a token. */
export async function runnerCall(server: string, token: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${server}/api/v1/runner${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/**
 * A proxy in front of a server on `port` (0: any): each request passed on as it came, answers streamed back. Stopping
 * it is the network between a runner and its server going away; starting one again on the same port, coming back.
 */
export function startServerProxy(serverUrl: string, port = 0): Server<undefined> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port,
    // A claim is a long poll of up to 25 s.
    idleTimeout: 60,
    fetch(req) {
      const u = new URL(req.url);
      // A cut connection ends the request upstream too, as when the server itself went away.
      return fetch(`${serverUrl}${u.pathname}${u.search}`, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        duplex: "half",
        signal: req.signal,
      } as RequestInit);
    },
  });
}

/** One call of the runner protocol with a token, as the `svc runner` process named `instance` makes it. */
export function instanceCall(server: string, token: string, instance: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${server}/api/v1/runner${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", [RUNNER_INSTANCE_HEADER]: instance },
    body: JSON.stringify(body),
  });
}
