// Rate limits: per IP before the key is read, per workspace shared by its keys, headers, and disabled mode.
import { afterEach, describe, expect, test } from "bun:test";
import { generateApiKey } from "../src/security/api-keys";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer | null = null;
afterEach(async () => {
  await s?.stop();
  s = null;
});

describe("rate limits", () => {
  test("the per-IP limit applies to invalid keys before they are validated", async () => {
    s = await startTestServer({ rate_limit: { per_ip_per_hour: 5, per_workspace_per_hour: 1000 } });
    const bogus = generateApiKey().key;
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await s.call("GET", "/projects", undefined, bogus)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const res = await s.call("GET", "/projects");
    expect(res.status).toBe(429);
    const body = await res.json();
    expect(body.error).toBe("rate_limited");
    const retry = Number(res.headers.get("retry-after"));
    // 5 per hour: one token every 720 s.
    expect(retry).toBeGreaterThan(600);
    expect(retry).toBeLessThanOrEqual(720);
    expect(res.headers.get("ratelimit-limit")).toBe("5");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
  });

  test("the workspace budget is shared by all its keys and admits exactly the budget", async () => {
    s = await startTestServer({ rate_limit: { per_ip_per_hour: 10000, per_workspace_per_hour: 10 } });
    const second = await s.userWithKey("two@acme.test", "acme", "member");
    const outsider = await s.userWithKey("out@globex.test", "globex", "owner");
    let ok = 0;
    let limited = 0;
    for (let i = 0; i < 16; i++) {
      const res = await s.call("GET", "/projects", undefined, i % 2 === 0 ? s.key : second.key);
      if (res.status === 200) ok++;
      else if (res.status === 429) {
        limited++;
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      }
    }
    expect(ok).toBe(10);
    expect(limited).toBe(6);
    // Another workspace has its own budget.
    const res = await s.call("GET", "/projects", undefined, outsider.key);
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-limit")).toBe("10");
    expect(res.headers.get("ratelimit-remaining")).toBe("9");
  });

  test("every response carries the RateLimit headers while enabled, counting down", async () => {
    s = await startTestServer({ rate_limit: { per_ip_per_hour: 10000, per_workspace_per_hour: 100 } });
    const a = await s.call("GET", "/projects");
    const b = await s.call("GET", "/projects/nope");
    expect(a.headers.get("ratelimit-limit")).toBe("100");
    expect(Number(a.headers.get("ratelimit-remaining"))).toBe(99);
    expect(Number(b.headers.get("ratelimit-remaining"))).toBe(98);
    expect(Number(a.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    const unauth = await s.call("GET", "/projects", undefined, null);
    expect(unauth.headers.get("ratelimit-limit")).toBe("10000");
  });

  test("disabled by configuration: no headers and no limit", async () => {
    s = await startTestServer({ rate_limit: { per_ip_per_hour: 2, per_workspace_per_hour: 2 } }, { SVC_RATE_LIMIT_ENABLED: "false" });
    for (let i = 0; i < 5; i++) {
      const res = await s.call("GET", "/projects");
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBeNull();
      expect(res.headers.get("ratelimit-remaining")).toBeNull();
    }
  });
});
