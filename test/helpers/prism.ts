// Runs the Prism mock server (@stoplight/prism-cli) as a real process on a free port, serving an OpenAPI document
// from its examples and schemas: a static mock, as a new user would point svc at one.
import { createServer } from "node:net";
import { join } from "node:path";

export interface PrismMock {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const PRISM = join(import.meta.dir, "..", "..", "node_modules", ".bin", "prism");

export async function startPrism(documentPath: string, timeoutMs = 60_000): Promise<PrismMock> {
  const port = await freePort();
  const proc = Bun.spawn([PRISM, "mock", "-h", "127.0.0.1", "-p", String(port), documentPath], { stdout: "ignore", stderr: "pipe" });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Any HTTP answer (Prism's own 404 for "/") means it listens.
    const up = await fetch(`${url}/`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (proc.exitCode !== null) throw new Error(`prism exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    if (Date.now() > deadline) {
      proc.kill();
      throw new Error(`prism did not listen on ${url} within ${timeoutMs} ms`);
    }
    await Bun.sleep(100);
  }
  return {
    url,
    async stop() {
      proc.kill();
      await proc.exited;
    },
  };
}
