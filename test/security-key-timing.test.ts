// Refusing a wrong key takes the same time whether or not it shares a prefix with a real key: keys are looked
// up by their SHA-256 hash and compared in constant time, so a prefix gives an attacker nothing to measure.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHttpService } from "../src/http/app";
import { generateApiKey, isWellFormedApiKey, keyFromRandomPart } from "../src/security/api-keys";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false }, log_level: "silent" });
});
afterAll(() => s.stop());

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

test("a wrong key sharing the real key's prefix is refused no faster than an unrelated one", async () => {
  const service = createHttpService({ core: s.server.core });
  const random = s.key.slice(4, 41);
  // Same first 36 random characters as the real key, a different last one, a valid checksum.
  const near = keyFromRandomPart(random.slice(0, 36) + (random.endsWith("a") ? "b" : "a"));
  const far = generateApiKey().key;
  expect(isWellFormedApiKey(near)).toBe(true);
  expect(near).not.toBe(s.key);
  const send = async (key: string) => {
    const t0 = performance.now();
    const res = await service.fetch(new Request("http://127.0.0.1/api/v1/ops/projects", { headers: { authorization: `Bearer ${key}` } }), "127.0.0.1");
    await res.arrayBuffer();
    expect(res.status).toBe(401);
    return performance.now() - t0;
  };
  for (let i = 0; i < 300; i++) await send(i % 2 ? near : far); // warm up both paths
  const nearTimes: number[] = [];
  const farTimes: number[] = [];
  for (let i = 0; i < 3000; i++) {
    // Interleaved, so load on the machine affects both alike.
    nearTimes.push(await send(near));
    farTimes.push(await send(far));
  }
  const ratio = median(nearTimes) / median(farTimes);
  console.log(
    `median refusal: near-prefix ${(median(nearTimes) * 1000).toFixed(1)} µs, unrelated ${(median(farTimes) * 1000).toFixed(1)} µs, ratio ${ratio.toFixed(3)}`,
  );
  expect(ratio).toBeGreaterThan(0.75);
  expect(ratio).toBeLessThan(1.33);
});
