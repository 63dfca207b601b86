// API keys as stored and used: last_used_at is recorded per key (shown at once by the listing, written to the
// database by the batched flush at the latest when the server stops), and the database only ever holds a
// SHA-256 hash of a key — checked by opening the real SQLite file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createApiKey } from "../src/core/access/users";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";

const dataDir = tempDir("svc-keys-");
let s: TestServer;
let stopped = false;
/** Three keys of one member: `used` makes a request, `lister` reads the listing, `idle` is never used. */
const keys: Record<"used" | "lister" | "idle", { key: string; id: string }> = {} as never;
let listed: { id: string; last_used_at: string | null }[] = [];
let usedBetween: [string, string] = ["", ""];

beforeAll(async () => {
  s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
  const member = await s.userWithKey("kim@acme.test", "acme", "member");
  const me = await (await s.call("GET", "/me")).json();
  keys.used = { key: member.key, id: member.keyId };
  for (const name of ["lister", "idle"] as const) {
    const k = await createApiKey(s.server.core.db, { userId: member.userId, workspaceId: me.workspace.id, name, expiresAt: null });
    keys[name] = { key: k.key, id: k.id };
  }
  s.server.core.keys.invalidate();
});

afterAll(async () => {
  if (!stopped) await s.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

describe("last_used_at", () => {
  test("is null until a key is used, then the listing shows when, for that key only", async () => {
    const before = await (await s.call("GET", "/keys", undefined, keys.lister.key)).json();
    const byIdBefore = new Map(before.data.map((k: { id: string; last_used_at: string | null }) => [k.id, k.last_used_at]));
    expect(byIdBefore.get(keys.used.id)).toBeNull();
    expect(byIdBefore.get(keys.idle.id)).toBeNull();

    const start = new Date().toISOString();
    // Two uses: the later one is what counts.
    expect((await s.call("GET", "/projects", undefined, keys.used.key)).status).toBe(200);
    await Bun.sleep(5);
    expect((await s.call("GET", "/me", undefined, keys.used.key)).status).toBe(200);
    const end = new Date().toISOString();
    usedBetween = [start, end];

    const after = await (await s.call("GET", "/keys", undefined, keys.lister.key)).json();
    listed = after.data;
    const byId = new Map(listed.map((k) => [k.id, k.last_used_at]));
    expect(byId.size).toBe(3);
    const used = byId.get(keys.used.id) as string;
    expect(used).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(used >= start && used <= end).toBe(true);
    expect(Date.parse(used) - Date.parse(start)).toBeGreaterThanOrEqual(5);
    expect(byId.get(keys.idle.id)).toBeNull();
    expect(byId.get(keys.lister.id)).not.toBeNull();
  });

  test("is written to the api_keys rows by the time the server has stopped", async () => {
    expect(listed.length).toBe(3);
    await s.stop();
    stopped = true;
    const db = new Database(join(dataDir, "svc.sqlite"), { readonly: true });
    try {
      const rows = db.query("SELECT id, last_used_at FROM api_keys").all() as { id: string; last_used_at: string | null }[];
      const byId = new Map(rows.map((r) => [r.id, r.last_used_at]));
      // Exactly what the listing showed while it was still pending.
      expect(byId.get(keys.used.id)).toBe(listed.find((k) => k.id === keys.used.id)?.last_used_at ?? "missing");
      expect((byId.get(keys.used.id) as string) >= usedBetween[0]).toBe(true);
      expect(byId.get(keys.idle.id)).toBeNull();
      expect((byId.get(keys.lister.id) as string) >= (byId.get(keys.used.id) as string)).toBe(true);
    } finally {
      db.close();
    }
  });
});

describe("storage of keys", () => {
  test("no column of api_keys holds a key; the hash column is the SHA-256 hex of the whole key", () => {
    const db = new Database(join(dataDir, "svc.sqlite"), { readonly: true });
    try {
      const rows = db.query("SELECT * FROM api_keys").all() as Record<string, unknown>[];
      const all = [...Object.values(keys).map((k) => k.key), s.key];
      expect(rows.length).toBe(all.length);
      for (const key of all) {
        const row = rows.find((r) => r.hash === sha256Hex(key));
        expect(row).toBeDefined();
        expect(row?.hash).toMatch(/^[0-9a-f]{64}$/);
        // The display prefix is all that is kept of the key itself: "svc_" + its first 8 characters.
        expect(row?.prefix).toBe(key.slice(0, 12));
        const secret = key.slice(12);
        for (const r of rows) {
          for (const [column, value] of Object.entries(r)) {
            const text = value instanceof Uint8Array ? Buffer.from(value).toString("latin1") : String(value);
            expect({ column, holdsKey: text.includes(secret) }).toEqual({ column, holdsKey: false });
          }
        }
      }
    } finally {
      db.close();
    }
  });

  test("the key's secret part appears nowhere in the database files", () => {
    const secrets = [...Object.values(keys).map((k) => k.key), s.key].map((k) => k.slice(12));
    expect(readFileSync(join(dataDir, "svc.sqlite")).length).toBeGreaterThan(0);
    for (const file of ["svc.sqlite", "svc.sqlite-wal"].map((f) => join(dataDir, f)).filter(existsSync)) {
      const bytes = readFileSync(file).toString("latin1");
      for (const secret of secrets) expect({ file, found: bytes.includes(secret) }).toEqual({ file, found: false });
    }
  });
});
