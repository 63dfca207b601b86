// Three nodes on one PostgreSQL database each run the alert delivery engine: a delivery in the outbox is sent by one
// node per attempt, never by two. The receiver refuses every delivery's first attempt, so every retry comes due at
// one moment on all three nodes (each wakes at the outbox's soonest due time), and each attempt is taken once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { type RunningServer, startServer } from "../src/server";
import { freshDatabaseUrl } from "./helpers/postgres";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";

const DELIVERIES = 20;
const dirs: string[] = [];
let a: TestServer;
let others: RunningServer[] = [];
const received = new Map<string, number>();
let receiver: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const id = req.headers.get("x-svc-delivery") ?? "";
      const seen = (received.get(id) ?? 0) + 1;
      received.set(id, seen);
      return new Response(seen === 1 ? "not yet" : "ok", { status: seen === 1 ? 500 : 200 });
    },
  });
  const url = await freshDatabaseUrl();
  const alerts = { retry_first_ms: 300, retry_max_attempts: 5 };
  a = await startTestServer({ database: { url }, alerts });
  for (let i = 0; i < 2; i++) {
    const dir = tempDir("svc-pg-alerts-");
    dirs.push(dir);
    const flags = {
      port: 0,
      data_dir: dir,
      log_level: "error",
      "database.url": url,
      "secrets.key_file": join(a.dataDir, "secrets.key"),
      "alerts.retry_first_ms": alerts.retry_first_ms,
    };
    others.push(await startServer(loadConfig({ env: {}, flags })));
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(others.map((o) => o.stop()));
  await a.stop();
  await receiver.stop(true);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  others = [];
});

test("every delivery's attempts are each sent by one node: 20 deliveries, each refused once, arrive exactly twice", async () => {
  await json(await a.call("POST", "/projects", { name: "Shop" }), 201);
  const channel = await json<{ id: string }>(
    await a.call("POST", "/projects/shop/alert-channels", {
      name: "hook",
      kind: "webhook",
      url: `http://127.0.0.1:${receiver.port}/hook`,
      secret: "a-signing-secret",
    }),
    201,
  );
  const ids: string[] = [];
  for (let i = 0; i < DELIVERIES; i++) {
    ids.push((await json<{ delivery_id: string }>(await a.call("POST", `/projects/shop/alert-channels/${channel.id}/test`), 202)).delivery_id);
  }
  type Delivery = { delivery_id: string; status: string; attempts: number };
  const list = async () => (await json<{ data: Delivery[] }>(await a.call("GET", `/projects/shop/alert-channels/${channel.id}/deliveries?limit=100`))).data;
  expect(await waitUntilAsync(async () => (await list()).filter((d) => d.status === "delivered").length === DELIVERIES, 30_000, 100)).toBe(true);
  // Every node has polled the outbox more than once since (each polls at least every second).
  await Bun.sleep(2500);
  expect(Object.fromEntries(ids.map((id) => [id, received.get(id)]))).toEqual(Object.fromEntries(ids.map((id) => [id, 2])));
  expect((await list()).map((d) => d.attempts)).toEqual(Array(DELIVERIES).fill(2));
}, 90_000);
