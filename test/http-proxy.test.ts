// Behind a trusted reverse proxy: the per-IP limit counts the address the proxy appended to X-Forwarded-For
// (the entries before it are the client's own words), and the public address shown in the CLI install
// script and the web application follows X-Forwarded-Proto / X-Forwarded-Host. Without trust_proxy those
// headers change nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

const statuses = async (s: TestServer, forwardedFor: (i: number) => string, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await s.call("GET", "/projects", undefined, s.key, { "x-forwarded-for": forwardedFor(i) })).status);
  return out;
};

describe("with trust_proxy", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ trust_proxy: true, rate_limit: { per_ip_per_hour: 3, per_workspace_per_hour: 1000 } });
  });
  afterAll(() => s.stop());

  test("a client rotating the first X-Forwarded-For entry is still one address", async () => {
    expect(await statuses(s, (i) => `198.51.100.${i}, 10.0.0.9`, 5)).toEqual([200, 200, 200, 429, 429]);
    // Another address appended by the proxy has its own budget.
    expect(await statuses(s, () => "10.0.0.10", 1)).toEqual([200]);
  });

  test("the install script and the web session name the address the proxy reports", async () => {
    const headers = { "x-forwarded-proto": "https", "x-forwarded-host": "svc.example.com" };
    const script = await (await fetch(`${s.url}/install.sh`, { headers })).text();
    expect(script).toContain("SERVER='https://svc.example.com'");
    const state = await (await fetch(`${s.url}/api/v1/web/session`, { headers })).json();
    expect(state.base_url).toBe("https://svc.example.com");
    // A port named by the proxy is kept; the scheme alone keeps the Host header the proxy passed on.
    const withPort = await (
      await fetch(`${s.url}/install.sh`, { headers: { "x-forwarded-proto": "https", "x-forwarded-host": "svc.example.com:8443" } })
    ).text();
    expect(withPort).toContain("SERVER='https://svc.example.com:8443'");
    const protoOnly = await (await fetch(`${s.url}/install.sh`, { headers: { "x-forwarded-proto": "https", host: "svc.internal" } })).text();
    expect(protoOnly).toContain("SERVER='https://svc.internal'");
  });
});

describe("without trust_proxy", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ rate_limit: { per_ip_per_hour: 2, per_workspace_per_hour: 1000 } });
  });
  afterAll(() => s.stop());

  test("X-Forwarded-* headers are ignored", async () => {
    expect(await statuses(s, (i) => `10.0.0.${i}`, 3)).toEqual([200, 200, 429]);
    const script = await (await fetch(`${s.url}/install.sh`, { headers: { "x-forwarded-proto": "https", "x-forwarded-host": "evil.example" } })).text();
    expect(script).toContain(`SERVER='${s.url}'`);
  });
});
