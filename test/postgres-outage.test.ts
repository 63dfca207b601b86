// PostgreSQL stopped under a running node, then started again (a cluster of the test's own, on either pass): while
// it is away every request is answered at once (503), /readyz says the database is unreachable and /healthz that the
// process lives; once it is back the node serves and is ready again within seconds, unrestarted.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { clusterOfItsOwn } from "./helpers/postgres";
import { silentableProxy } from "./helpers/silent-proxy";
import { startTestServer, type TestServer } from "./helpers/server";

/** How long the database stays away: every engine's polls fail meanwhile, as in an outage of any length. */
const OUTAGE_MS = 6_000;
let cluster: Awaited<ReturnType<typeof clusterOfItsOwn>>;
let server: TestServer | undefined;

beforeAll(async () => {
  cluster = await clusterOfItsOwn();
  server = await startTestServer({}, { SVC_DATABASE_URL: cluster.url });
}, 60_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

/** A request's status and how long its answer took. */
async function timed(path: string, key?: string): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  const res = await fetch(`${server?.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const body = await res.text();
  return { status: res.status, ms: performance.now() - started, body };
}

test("the database away for 6 s: requests get 503 at once, /readyz 503 and /healthz 200; back, the node serves within 3 s and is ready within 5 s", async () => {
  const node = server as TestServer;
  expect((await timed("/api/v1/ops/projects", node.key)).status).toBe(200);
  cluster.stop();
  const during: { status: number; ms: number }[] = [];
  for (const until = Date.now() + OUTAGE_MS; Date.now() < until; await Bun.sleep(200)) {
    const { status, ms } = await timed("/api/v1/ops/projects", node.key);
    during.push({ status, ms });
  }
  expect(during.filter((r) => r.status !== 503)).toEqual([]);
  expect(during.filter((r) => r.ms > 2_000)).toEqual([]);
  const ready = await timed("/readyz");
  expect(ready.status).toBe(503);
  expect(ready.ms).toBeLessThan(4_000);
  expect(JSON.parse(ready.body).checks.database.ok).toBe(false);
  expect((await timed("/healthz")).status).toBe(200);

  cluster.start();
  const upAt = Date.now();
  let served = -1;
  for (; Date.now() - upAt < 10_000; await Bun.sleep(100)) {
    if ((await timed("/api/v1/ops/projects", node.key)).status === 200) {
      served = Date.now() - upAt;
      break;
    }
  }
  expect(served).toBeGreaterThanOrEqual(0);
  expect(served).toBeLessThan(3_000);
  let readyAfter = -1;
  for (; Date.now() - upAt < 15_000; await Bun.sleep(100)) {
    if ((await timed("/readyz")).status === 200) {
      readyAfter = Date.now() - upAt;
      break;
    }
  }
  expect(readyAfter).toBeGreaterThanOrEqual(0);
  expect(readyAfter).toBeLessThan(5_000);
}, 60_000);

test("the database host silent (packets dropped): /readyz still answers 503 within its 3 s probe, naming the database", async () => {
  const proxy = silentableProxy(Number(new URL(cluster.url).port));
  const url = new URL(cluster.url);
  url.port = String(proxy.port);
  const node = await startTestServer({}, { SVC_DATABASE_URL: url.toString(), SVC_SECRETS_KEY_FILE: join((server as TestServer).dataDir, "secrets.key") });
  try {
    expect((await fetch(`${node.url}/readyz`)).status).toBe(200);
    proxy.silent(true);
    const started = performance.now();
    const ready = await fetch(`${node.url}/readyz`);
    const ms = performance.now() - started;
    const body = (await ready.json()) as { checks: { database: { ok: boolean; message?: string }; migrations: { ok: boolean } } };
    expect(ready.status).toBe(503);
    expect(body.checks.database).toMatchObject({ ok: false, message: "the PostgreSQL database is not writable: no answer from PostgreSQL within 3000 ms" });
    expect(body.checks.migrations.ok).toBe(false);
    // Its checks wait at once, not one after the other (6 s).
    expect(ms).toBeLessThan(4_500);
  } finally {
    // Its connections lost what was sent meanwhile: closed, so the node's pool gives up on them and it can stop.
    proxy.stop();
    await node.stop();
  }
}, 60_000);
