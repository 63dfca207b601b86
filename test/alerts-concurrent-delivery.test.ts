// Alert deliveries are sent concurrently, within bounds: a webhook that accepts the connection and never answers holds
// up only its own channel, not every other channel of every workspace until alerts.timeout_ms; a channel has one
// delivery in flight at a time; and stopping the server lets the deliveries in flight finish and be recorded while
// the ones not yet begun stay pending in the outbox.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import type { Server } from "bun";
import { json } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const SECRET = "whsec-Concurrent-41a9";
/** One attempt's limit: a hanging receiver costs this long per delivery. */
const TIMEOUT_MS = 4000;

interface Arrival {
  path: string;
  delivery: string;
  at: number;
}

let s: TestServer;
/** Accepts every request and answers none until released. */
let hanging: Server<undefined>;
const held: Arrival[] = [];
const release: (() => void)[] = [];
/** Answers 204 at once. */
let prompt: Server<undefined>;
const answered: Arrival[] = [];
let otherKey: string;

const arrival = (req: Request): Arrival => ({ path: new URL(req.url).pathname, delivery: req.headers.get("x-svc-delivery") ?? "", at: Date.now() });
const releaseAll = () => {
  for (const r of release.splice(0)) r();
};

beforeAll(async () => {
  hanging = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    fetch(req) {
      held.push(arrival(req));
      return new Promise<Response>((resolve) => release.push(() => resolve(new Response(null, { status: 204 }))));
    },
  });
  prompt = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      answered.push(arrival(req));
      return new Response(null, { status: 204 });
    },
  });
  // No retry comes due while the test runs: each delivery here is attempted once.
  s = await startTestServer({ rate_limit: { enabled: false }, alerts: { timeout_ms: TIMEOUT_MS, retry_first_ms: 600_000, retry_max_attempts: 2 } });
  otherKey = (await s.userWithKey("ops@globex.test", "globex")).key;
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(await s.call("POST", "/projects", { name: "night" }, otherKey), 201);
}, 60_000);

afterAll(async () => {
  releaseAll();
  await s.stop();
  releaseAll();
  await hanging.stop(true);
  await prompt.stop(true);
});

async function channel(project: string, name: string, server: Server<undefined>, key?: string): Promise<string> {
  const url = `http://127.0.0.1:${server.port}/${name}`;
  return (await json<{ id: string }>(await s.call("POST", `/projects/${project}/alert-channels`, { name, kind: "webhook", url, secret: SECRET }, key), 201)).id;
}
async function sendTest(project: string, channelId: string, key?: string): Promise<string> {
  return (await json<{ delivery_id: string }>(await s.call("POST", `/projects/${project}/alert-channels/${channelId}/test`, undefined, key), 202)).delivery_id;
}

describe("concurrent alert delivery", () => {
  test("hanging webhooks hold up only their own channels: other channels, in this and another workspace, get theirs at once", async () => {
    const stuckA = await channel("shop", "stuck-a", hanging);
    const stuckB = await channel("shop", "stuck-b", hanging);
    const sameWorkspace = await channel("shop", "fine", prompt);
    const otherWorkspace = await channel("night", "fine-too", prompt, otherKey);
    // A backlog on each hanging channel: two deliveries each, one of them in flight.
    for (const ch of [stuckA, stuckB]) {
      await sendTest("shop", ch);
      await sendTest("shop", ch);
    }
    expect(await waitUntil(() => new Set(held.map((h) => h.path)).size === 2, 10_000)).toBe(true);

    const queuedAt = Date.now();
    const mine = await sendTest("shop", sameWorkspace);
    const theirs = await sendTest("night", otherWorkspace, otherKey);
    expect(await waitUntil(() => answered.length >= 2, TIMEOUT_MS * 3)).toBe(true);
    expect(answered.map((a) => a.delivery).sort()).toEqual([mine, theirs].sort());
    // Well before the hanging attempts' time limit.
    for (const a of answered) expect(a.at - queuedAt).toBeLessThan(TIMEOUT_MS / 2);
    // One delivery of a channel in flight at a time: the second of each backlog waits for the first's attempt.
    expect(held.map((h) => h.path).sort()).toEqual(["/stuck-a", "/stuck-b"]);

    // Once the first attempts end, the waiting deliveries are sent, and every delivery ends up delivered once.
    releaseAll();
    expect(await waitUntil(() => held.length === 4, TIMEOUT_MS * 3)).toBe(true);
    releaseAll();
    type Row = { status: string; attempts: number };
    const rows = async (ch: string, key?: string, project = "shop") =>
      (await json<{ data: Row[] }>(await s.call("GET", `/projects/${project}/alert-channels/${ch}/deliveries`, undefined, key))).data;
    expect(await waitUntilAsync(async () => [...(await rows(stuckA)), ...(await rows(stuckB))].every((r) => r.status === "delivered"), TIMEOUT_MS * 3)).toBe(
      true,
    );
    expect([...(await rows(stuckA)), ...(await rows(stuckB))].map((r) => r.attempts)).toEqual([1, 1, 1, 1]);
    expect(new Set(held.map((h) => h.delivery)).size).toBe(4);
    expect((await rows(otherWorkspace, otherKey, "night")).map((r) => [r.status, r.attempts])).toEqual([["delivered", 1]]);
  }, 60_000);

  test("stopping the server lets a delivery in flight finish and be recorded; one not yet begun stays pending", async () => {
    const own = await startTestServer({ rate_limit: { enabled: false }, alerts: { timeout_ms: TIMEOUT_MS, retry_first_ms: 600_000 } });
    try {
      await json(await own.call("POST", "/projects", { name: "shop" }), 201);
      const url = `http://127.0.0.1:${hanging.port}/at-stop`;
      const ch = (
        await json<{ id: string }>(await own.call("POST", "/projects/shop/alert-channels", { name: "at-stop", kind: "webhook", url, secret: SECRET }), 201)
      ).id;
      const test = async () => (await json<{ delivery_id: string }>(await own.call("POST", `/projects/shop/alert-channels/${ch}/test`), 202)).delivery_id;
      const first = await test();
      expect(await waitUntil(() => held.some((h) => h.delivery === first), 10_000)).toBe(true);
      const second = await test();
      let stopped = false;
      const stopping = own.server.stop().then(() => {
        stopped = true;
      });
      await Bun.sleep(300);
      expect(stopped).toBe(false);
      releaseAll();
      await stopping;
      const rows = await own.sql<{ id: string; status: string; attempts: number }>(
        "SELECT id, status, attempts FROM alert_deliveries WHERE channel_id = ? ORDER BY created_at, id",
        ch,
      );
      expect(Object.fromEntries(rows.map((r) => [r.id, [r.status, r.attempts]]))).toEqual({ [first]: ["delivered", 1], [second]: ["pending", 0] });
      expect(held.filter((h) => h.delivery === second)).toHaveLength(0);
    } finally {
      rmSync(own.dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
