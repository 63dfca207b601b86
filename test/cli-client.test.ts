// The shared HTTP client: polling schedule, slowing down on a low RateLimit-Remaining, timeouts, contract checks.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ApiClient } from "../src/client/api-client";
import { ClientError } from "../src/client/errors";
import { pollUntil } from "../src/client/wait";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ rate_limit: { per_ip_per_hour: 10_000, per_workspace_per_hour: 12 } });
});
afterAll(() => s.stop());

const clientFor = (server: string, extra: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}) =>
  new ApiClient({ server, key: s.key, userAgent: "svc-cli/test", ...extra });

test("polling starts at 1 s and backs off to 5 s", async () => {
  const sleeps: number[] = [];
  let n = 0;
  const res = await pollUntil(
    clientFor(s.url),
    async () => ({ status: ++n < 8 ? "running" : "passed" }),
    (r) => r.status === "passed",
    {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
  );
  expect(res).toMatchObject({ timedOut: false, polls: 8, record: { status: "passed" } });
  expect(sleeps).toEqual([1000, 1500, 2250, 3375, 5000, 5000, 5000]);
});

test("with RateLimit-Remaining low, polling slows to the refill rate", async () => {
  const client = clientFor(s.url);
  // 12 per hour: one token every 300 s; after 9 calls only 3 remain, under the low-water mark of 5.
  for (let i = 0; i < 9; i++) await client.call("listProjects", {});
  expect(client.lastRateLimit).toMatchObject({ limit: 12, remaining: 3 });
  const sleeps: number[] = [];
  let n = 0;
  await pollUntil(
    client,
    async () => ({ status: ++n < 3 ? "running" : "passed" }),
    (r) => r.status === "passed",
    {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
  );
  expect(sleeps).toHaveLength(2);
  for (const ms of sleeps) expect(ms).toBeGreaterThanOrEqual(60_000);
});

test("an overall timeout returns the current record with timedOut", async () => {
  const started = performance.now();
  const res = await pollUntil(
    clientFor(s.url),
    async () => ({ status: "running" }),
    () => false,
    { timeoutMs: 1200 },
  );
  const took = performance.now() - started;
  expect(res).toMatchObject({ timedOut: true, record: { status: "running" } });
  expect(res.polls).toBe(3);
  expect(took).toBeGreaterThanOrEqual(1150);
  expect(took).toBeLessThan(2500);
});

test("a request that takes too long is a timeout error; an answer off the contract is invalid_response", async () => {
  const odd = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      if (new URL(req.url).pathname.endsWith("/me")) {
        await Bun.sleep(1000);
        return Response.json({});
      }
      return Response.json({ data: [{ id: 1 }], next_cursor: null });
    },
  });
  try {
    const client = clientFor(`http://127.0.0.1:${odd.port}`, { timeoutMs: 200 });
    const slow = await client.call("whoami", {}).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(ClientError);
    expect((slow as ClientError).toJSON()).toMatchObject({ status: 0, error: "timeout" });
    const bad = await client.call("listProjects", {}).catch((e: unknown) => e);
    expect((bad as ClientError).toJSON()).toMatchObject({ status: 200, error: "invalid_response" });
  } finally {
    await odd.stop(true);
  }
});

test("long-polling: a read held for its whole wait is read again at once; one answered early falls back to the polling schedule", async () => {
  const waits: number[] = [];
  const sleeps: number[] = [];
  const res = await pollUntil(
    clientFor(s.url),
    async (wait) => {
      waits.push(wait);
      // Reads 1 and 2 are held by the server for their wait; read 3 comes back at once (a server that could not wait).
      if (waits.length <= 2) await Bun.sleep(wait * 1000);
      return { status: waits.length < 4 ? "running" : "passed" };
    },
    (r) => r.status === "passed",
    {
      longPollSeconds: 1,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
  );
  expect(res).toMatchObject({ timedOut: false, polls: 4 });
  expect(waits).toEqual([1, 1, 1, 1]);
  expect(sleeps).toEqual([1000]);
});

test("long-polling with under a second left polls instead of spinning, and the first read may answer at once", async () => {
  const waits: number[] = [];
  const res = await pollUntil(
    clientFor(s.url),
    async (wait) => {
      waits.push(wait);
      return { status: "running" };
    },
    () => false,
    { longPollSeconds: 10, timeoutMs: 600, firstReadAtOnce: true },
  );
  expect(res.timedOut).toBe(true);
  // At once, then polls spaced by the schedule (1 s) cut to what is left: a few reads, none asking to wait.
  expect(waits.every((w) => w === 0)).toBe(true);
  expect(waits.length).toBeLessThanOrEqual(3);
});
