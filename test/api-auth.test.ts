// Authentication and workspace isolation: every way a key can be wrong is a 401; other workspaces are 404.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateApiKey } from "../src/security/api-keys";
import { onPostgres } from "./helpers/postgres";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let other: { key: string; keyId: string; userId: string };
let otherProject: string;
let otherAutomation: string;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  other = await s.userWithKey("eve@globex.test", "globex", "owner");
  otherProject = (await (await s.call("POST", "/projects", { name: "Secret", slug: "secret" }, other.key)).json()).id;
  otherAutomation = (
    await (
      await s.call(
        "POST",
        "/projects/secret/automations",
        {
          name: "hidden",
          kind: "http",
          steps: [{ request: { url: "http://127.0.0.1:9/x" } }],
        },
        other.key,
      )
    ).json()
  ).id;
  await s.call("POST", "/projects", { name: "Shop", slug: "shop" });
});
afterAll(() => s.stop());

async function expect401(res: Response) {
  expect(res.status).toBe(401);
  const body = await res.json();
  expect(body.error).toBe("unauthorized");
  expect(body.message).toContain("Bearer");
  expect(body.message).toContain("key");
}

describe("401 for every kind of bad credential", () => {
  const wellFormedUnknown = generateApiKey().key;
  const cases: [string, () => Promise<Response>][] = [
    ["no Authorization header", () => s.call("GET", "/projects", undefined, null)],
    ["a Basic scheme", () => s.call("GET", "/projects", undefined, null, { authorization: "Basic dXNlcjpwYXNz" })],
    ["a malformed key", () => s.call("GET", "/projects", undefined, "svc_short")],
    ["a key with a wrong checksum", () => s.call("GET", "/projects", undefined, `${s.key.slice(0, -1)}${s.key.endsWith("A") ? "B" : "A"}`)],
    ["a well-formed key that was never issued", () => s.call("GET", "/projects", undefined, wellFormedUnknown)],
    ["an empty bearer", () => s.call("GET", "/projects", undefined, null, { authorization: "Bearer " })],
  ];
  for (const [name, send] of cases) test(name, async () => expect401(await send()));

  test("a revoked key, at once", async () => {
    const k = await s.userWithKey("rev@acme.test", "acme", "member");
    expect((await s.call("GET", "/projects", undefined, k.key)).status).toBe(200);
    expect((await s.call("DELETE", `/keys/${k.keyId}`, undefined, k.key)).status).toBe(204);
    await expect401(await s.call("GET", "/projects", undefined, k.key));
  });

  test("an expired key", async () => {
    // Counted from when the key is made (making the user may take a second under load); then wait until it has passed.
    const k = await s.userWithKey("exp@acme.test", "acme", "member", { inMs: 3000 });
    expect((await s.call("GET", "/projects", undefined, k.key)).status).toBe(200);
    await Bun.sleep(Math.max(0, Date.parse(k.expiresAt ?? "") - Date.now()) + 100);
    await expect401(await s.call("GET", "/projects", undefined, k.key));
  });

  test("the key of a removed member, at once", async () => {
    const k = await s.userWithKey("gone@acme.test", "acme", "member");
    expect((await s.call("GET", "/projects", undefined, k.key)).status).toBe(200);
    expect((await s.call("DELETE", `/members/${k.userId}`)).status).toBe(204);
    await expect401(await s.call("GET", "/projects", undefined, k.key));
  });

  test("a key revoked by another process (svc admin) stops working too", async () => {
    const k = await s.userWithKey("ext@acme.test", "acme", "member");
    expect((await s.call("GET", "/projects", undefined, k.key)).status).toBe(200);
    await s.sql("UPDATE api_keys SET revoked_at = ? WHERE id = ?", new Date().toISOString(), k.keyId);
    await Bun.sleep(2); // another process's commit is noticed at most 1 ms late on SQLite (ChangeFeed)
    // On PostgreSQL it is noticed when the commit's notification arrives: within 1 s (the bound), in practice at once.
    const until = Date.now() + (onPostgres ? 1000 : 0);
    while (Date.now() < until && (await s.call("GET", "/projects", undefined, k.key)).status !== 401) await Bun.sleep(10);
    await expect401(await s.call("GET", "/projects", undefined, k.key));
  });
});

describe("another workspace's resources are not found", () => {
  const paths = () =>
    [
      ["GET", `/projects/${otherProject}`],
      ["GET", "/projects/secret"],
      ["PATCH", `/projects/${otherProject}`],
      ["DELETE", "/projects/secret"],
      ["GET", `/projects/secret/automations/${otherAutomation}`],
      ["GET", `/projects/shop/automations/${otherAutomation}`],
      ["POST", `/projects/shop/automations/${otherAutomation}/run`],
      ["DELETE", `/projects/shop/automations/${otherAutomation}`],
      ["GET", "/projects/secret/features"],
      ["GET", "/projects/secret/runs"],
    ] as const;
  test("each route answers 404 and reveals nothing", async () => {
    for (const [method, path] of paths()) {
      const res = await s.call(method, path, method === "PATCH" ? { name: "x" } : undefined);
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      const text = await res.text();
      expect(text).not.toContain("Secret");
      expect(text).not.toContain("hidden");
    }
    const mine = await (await s.call("GET", "/projects")).json();
    expect(mine.data.map((p: { slug: string }) => p.slug)).toEqual(["shop"]);
    const still = await s.call("GET", `/projects/secret/automations/${otherAutomation}`, undefined, other.key);
    expect(still.status).toBe(200);
  });

  test("wrong-shaped ids are 404, never 400", async () => {
    for (const id of ["x", "aut_", "../../etc/passwd", "%00", "aut_'; DROP TABLE automations;--", "a".repeat(300), "%E0%A4%A"]) {
      const res = await s.call("GET", `/projects/shop/automations/${id}`);
      expect({ id, status: res.status }).toEqual({ id, status: 404 });
      expect((await res.json()).error).toBe("not_found");
    }
  });
});
