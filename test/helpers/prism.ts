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

/** Prism's own answer to a path its document lacks: a problem document naming Prism (not some other server on the port). */
async function isPrism(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/`);
    return (await res.text()).includes("stoplight.io/prism");
  } catch {
    return false;
  }
}

export async function startPrism(documentPath: string, timeoutMs = 60_000): Promise<PrismMock> {
  // The port is free when chosen but may be taken before Prism binds it: then Prism exits, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort(), documentPath, timeoutMs);
    } catch (e) {
      if (attempt >= 3 || !(e instanceof PrismExited)) throw e;
    }
  }
}

class PrismExited extends Error {}

async function startOn(port: number, documentPath: string, timeoutMs: number): Promise<PrismMock> {
  const proc = Bun.spawn([PRISM, "mock", "-h", "127.0.0.1", "-p", String(port), documentPath], { stdout: "ignore", stderr: "pipe" });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exitCode !== null) throw new PrismExited(`prism exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    if (await isPrism(url)) break;
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
