// A schema-driven fuzzer: for every manifest operation, hundreds of invalid and edge-case requests. Every
// answer must be a 4xx in the error shape (never a 5xx), and the database must be unchanged afterwards.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import fc from "fast-check";
import { join } from "node:path";
import type { z } from "zod";
import { operations } from "../src/manifest";
import type { Operation } from "../src/manifest/define";
import { startTestServer, type TestServer } from "./helpers/server";
import { VALID_BODIES } from "./helpers/valid-bodies";

let s: TestServer;
const valid: Record<string, string> = {};

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false }, max_body_bytes: 64 * 1024 });
  const j = async (r: Promise<Response>) => (await r).json();
  valid.project = "shop";
  await j(s.call("POST", "/projects", { name: "Shop", slug: "shop" }));
  valid.environmentId = (await j(s.call("POST", "/projects/shop/environments", { name: "staging", secrets: { T: "staging-secret" } }))).id;
  valid.feature = (await j(s.call("POST", "/projects/shop/features", { name: "fixture feature" }))).id;
  // A target that never answers keeps the queued run from finishing while the fuzzer runs.
  valid.automationId = (
    await j(s.call("POST", "/projects/shop/automations", { name: "fixture automation", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] }))
  ).id;
  valid.groupId = (await j(s.call("POST", "/projects/shop/groups", { name: "fixture group", automation_ids: [valid.automationId] }))).id;
  valid.scheduleId = (
    await j(s.call("POST", "/projects/shop/schedules", { name: "fixture schedule", target: { group: valid.groupId }, interval_seconds: 86_400 }))
  ).id;
  valid.channelId = (
    await j(s.call("POST", "/projects/shop/alert-channels", { name: "fixture channel", kind: "slack", url: "https://hooks.example.test/c" }))
  ).id;
  const me = await j(s.call("GET", "/me"));
  valid.userId = me.user.id;
  valid.keyId = me.key.id;
  valid.runId = "run_doesnotexist000000";
  valid.groupRunId = "grn_doesnotexist000000";
  valid.name = "x.png";
});
afterAll(() => s.stop());

/** Every table's rows, for before/after comparison (last-used times and idempotency records excluded). */
function dump(): string {
  const db = new Database(join(s.dataDir, "svc.sqlite"), { readonly: true });
  const tables = db
    .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'kysely_%' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all() as { name: string }[];
  const out: Record<string, unknown[]> = {};
  for (const { name } of tables) {
    if (name === "idempotency_keys") continue;
    out[name] = (db.query(`SELECT * FROM "${name}" ORDER BY 1`).all() as Record<string, unknown>[]).map((r) => {
      const { last_used_at: _l, ...rest } = r;
      return rest;
    });
  }
  db.close();
  return JSON.stringify(out);
}

/** Names of the fixture's records: paths resolve exact names, so these are valid values, not junk. */
const FIXTURE_NAMES = new Set(["staging", "fixture feature", "fixture automation", "fixture group", "fixture schedule", "fixture channel"]);
const junkString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("../../etc/passwd", "' OR 1=1 --", '"; DROP TABLE projects; --', "%00", "\u0000", "💥".repeat(10), "a".repeat(5000), "{{x}}", "<script>"),
);
const wrongValue = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(Number.NaN),
  fc.constant(-1),
  fc.array(fc.anything(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.anything(), { maxKeys: 3 }),
  junkString,
  fc.constant("x".repeat(100_000)),
);
function deep(n: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
}

function bodyKeys(op: Operation): string[] {
  let b = op.body as z.ZodType | null;
  for (let i = 0; i < 5 && b && !("shape" in b); i++) {
    const inner = (b as unknown as { def?: { innerType?: z.ZodType; in?: z.ZodType; schema?: z.ZodType } }).def;
    b = inner?.innerType ?? inner?.in ?? inner?.schema ?? null;
  }
  return b && "shape" in b ? Object.keys((b as z.ZodObject).shape) : [];
}

/** Bodies the operation's schema refuses: wrong types for known fields, unknown fields, junk, deep nesting. */
function invalidBodies(op: Operation) {
  const keys = bodyKeys(op);
  const mutated = keys.length
    ? fc.record({ key: fc.constantFrom(...keys), value: wrongValue }).map(({ key, value }) => ({ [key]: value }))
    : fc.constant({ unexpected: true });
  return fc
    .oneof(mutated, fc.jsonValue(), fc.record({ zz_unknown: fc.anything() }), fc.constant(deep(5000)), fc.constant([]), fc.constant("text"))
    .map((b) => JSON.stringify(b) ?? "null")
    .filter((text) => !(op.body as z.ZodType).safeParse(JSON.parse(text)).success);
}

function pathFor(op: Operation, params: Record<string, string>): string {
  return op.path.replace(/\{(\w+)\}/g, (_, p: string) => encodeURIComponent(params[p] ?? ""));
}

async function expectClientError(res: Response, allowed: number[]) {
  const text = await res.text();
  if (!allowed.includes(res.status)) throw new Error(`status ${res.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { error: unknown; message: unknown };
  if (typeof body.error !== "string" || typeof body.message !== "string") throw new Error(`not the error shape: ${text.slice(0, 200)}`);
}

describe("every operation refuses bad input without a 5xx and without changing anything", () => {
  // Session-only operations refuse an API key before reading input (security-auth-matrix checks that 403).
  for (const op of operations.filter((o) => !o.sessionOnly)) {
    test(op.name, async () => {
      const before = dump();
      const paramNames = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
      // Unknown or malformed ids: always 404 (other params valid).
      if (paramNames.length > 0) {
        await fc.assert(
          fc.asyncProperty(fc.constantFrom(...paramNames), junkString, async (name, value) => {
            // "." and ".." are resolved away by URL normalisation before they reach the server.
            if (value === valid[name] || value === "shop" || FIXTURE_NAMES.has(value) || value.length === 0 || value === "." || value === "..") return;
            const res = await s.call(op.method, pathFor(op, { ...valid, [name]: value }), op.body ? (VALID_BODIES[op.name] ?? {}) : undefined);
            await expectClientError(res, [404]);
          }),
          { numRuns: 60 },
        );
      }
      // Bad query strings on reads: 400 or a normal answer, never a 5xx.
      if (op.method === "GET") {
        await fc.assert(
          fc.asyncProperty(
            fc.dictionary(fc.constantFrom("limit", "cursor", "status", "kind", "q", "feature", "group", "automation"), junkString, { maxKeys: 3 }),
            async (q) => {
              const qs = new URLSearchParams(q).toString();
              const res = await s.call("GET", `${pathFor(op, valid)}?${qs}`);
              if (res.status >= 500) throw new Error(`${res.status} for ?${qs}: ${await res.text()}`);
              if (res.status !== 200) await expectClientError(res, [400, 404]);
              else await res.arrayBuffer();
            },
          ),
          { numRuns: 60 },
        );
      }
      if (op.body) {
        await fc.assert(
          fc.asyncProperty(invalidBodies(op), async (body) => {
            const res = await s.call(op.method, pathFor(op, valid), body);
            await expectClientError(res, [400, 404, 413]);
          }),
          { numRuns: 150 },
        );
        for (const [raw, type, status] of [
          ['{"name": ', "application/json", 400],
          ["\u00ff\u00fe{", "application/json", 400],
          ["name=x", "application/x-www-form-urlencoded", 415],
          ["{}", "text/plain", 415],
          [`{"name":"${"x".repeat(70_000)}"}`, "application/json", 413],
        ] as const) {
          const res = await fetch(`${s.api}${pathFor(op, valid)}`, {
            method: op.method,
            headers: { authorization: `Bearer ${s.key}`, "content-type": type },
            body: raw,
          });
          await expectClientError(res, [status]);
        }
      }
      expect(dump()).toBe(before);
    });
  }
});
