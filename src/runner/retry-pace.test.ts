import { expect, test } from "bun:test";
import { RetryPace } from "./remote";

test("retries wait 1 s, doubling up to the cap, and start over after a success", () => {
  let now = 0;
  const pace = new RetryPace("test call", 15_000, () => now);
  const waits: number[] = [];
  for (let i = 0; i < 7; i++) {
    waits.push(pace.failed({}));
    now += 1000;
  }
  expect(waits).toEqual([1000, 2000, 4000, 8000, 15_000, 15_000, 15_000]);
  pace.succeeded();
  expect(pace.failed({})).toBe(1000);
  const heartbeat = new RetryPace("heartbeat", 10_000, () => now);
  expect([heartbeat.failed({}), heartbeat.failed({}), heartbeat.failed({}), heartbeat.failed({}), heartbeat.failed({})]).toEqual([
    1000, 2000, 4000, 8000, 10_000,
  ]);
});
