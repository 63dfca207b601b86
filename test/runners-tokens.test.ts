// Runner tokens: made by `svc admin create-runner-token` or by a workspace's owners and admins (create_runner),
// shown once, only their hash stored; workspace runners listed and revoked by that workspace alone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hashApiKey } from "../src/security/api-keys";
import { json } from "./helpers/runs";
import { databaseEnv, startTestServer, type TestServer } from "./helpers/server";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  await s.userWithKey("owner@other.test", "other", "owner");
}, 60_000);
afterAll(() => s.stop());

async function admin(args: string[]) {
  const proc = Bun.spawn([process.execPath, MAIN, "admin", ...args, "--data-dir", s.dataDir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: s.dataDir, ...(await databaseEnv(s.dataDir)) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

async function storedRunner(id: string) {
  return (await s.sql("SELECT * FROM runners WHERE id = ?", id))[0];
}

type RunnerRecord = { id: string; name: string; labels: string[]; scope: string; running: number; last_seen_at: string | null; token?: string };

describe("runner tokens", () => {
  test("svc admin create-runner-token prints the token alone once (--json: {id, token}); only its hash is stored", async () => {
    const plain = await admin(["create-runner-token", "--name", "edge-1", "--labels", "eu,gpu"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^svcr_[0-9A-Za-z]{43}\n$/);
    const made = await admin(["create-runner-token", "--name", "edge-2", "--workspace", "acme", "--json"]);
    expect(made.code).toBe(0);
    const { id, token } = JSON.parse(made.stdout) as { id: string; token: string };
    expect(id).toStartWith("rnr_");
    expect(token).toMatch(/^svcr_/);
    const row = await storedRunner(id);
    expect(row?.token_hash).toBe(hashApiKey(token));
    expect(JSON.stringify(row)).not.toContain(token);
    // Listed to the workspace's owners without the token: a server-wide runner and the workspace's own.
    const list = await json<{ data: RunnerRecord[] }>(await s.call("GET", "/runners"));
    const names = list.data.map((r) => r.name);
    expect(names).toContain("edge-1");
    expect(names).toContain("edge-2");
    expect(list.data.find((r) => r.name === "edge-1")).toMatchObject({ scope: "server", labels: ["eu", "gpu"], running: 0, last_seen_at: null });
    expect(list.data.find((r) => r.name === "edge-2")).toMatchObject({ scope: "workspace", labels: [] });
    expect(JSON.stringify(list)).not.toContain(token);
  });

  test("bad flags are usage errors that change nothing", async () => {
    const bad = await admin(["create-runner-token", "--name", "x", "--labels", "EU!"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--labels");
    const noWs = await admin(["create-runner-token", "--name", "x", "--workspace", "nope"]);
    expect(noWs.code).toBe(2);
    expect(noWs.stderr).toContain("no workspace nope");
  });

  test("create_runner (owners and admins) shows the token once; another workspace neither sees nor revokes it; members get 403", async () => {
    const created = await json<RunnerRecord>(await s.call("POST", "/runners", { name: "ci-box", labels: ["office"] }), 201);
    expect(created.token).toMatch(/^svcr_[0-9A-Za-z]{43}$/);
    expect(created).toMatchObject({ scope: "workspace", labels: ["office"], running: 0 });
    const again = await json<RunnerRecord>(await s.call("GET", `/runners/${created.id}`));
    expect(again.token).toBeUndefined();
    expect((await storedRunner(created.id))?.token_hash).toBe(hashApiKey(String(created.token)));

    const other = await s.userWithKey("admin2@other.test", "other", "admin");
    expect((await s.call("GET", `/runners/${created.id}`, undefined, other.key)).status).toBe(404);
    expect((await s.call("DELETE", `/runners/${created.id}`, undefined, other.key)).status).toBe(404);
    const member = await s.userWithKey("member@acme.test", "acme", "member");
    expect((await s.call("GET", "/runners", undefined, member.key)).status).toBe(403);
    expect((await s.call("POST", "/runners", { name: "m" }, member.key)).status).toBe(403);

    const bad = await s.call("POST", "/runners", { name: "x", labels: ["Not OK"] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).details[0].path).toContain("labels");

    expect((await s.call("DELETE", `/runners/${created.id}`)).status).toBe(204);
    expect((await json<RunnerRecord & { revoked_at: string | null }>(await s.call("GET", `/runners/${created.id}`))).revoked_at).not.toBeNull();
  });

  test("a runner is shown and revoked by its exact name too; a name two share is a 409 listing both, another workspace's a 404", async () => {
    const made = await json<RunnerRecord>(await s.call("POST", "/runners", { name: "named-box", labels: [] }), 201);
    expect((await json<RunnerRecord>(await s.call("GET", "/runners/named-box"))).id).toBe(made.id);
    const other = await s.userWithKey("admin3@other.test", "other", "admin");
    expect((await s.call("GET", "/runners/named-box", undefined, other.key)).status).toBe(404);
    const missing = await s.call("GET", "/runners/no-such-box");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { message: string }).message).toContain('no runner named "no-such-box"');
    const twin = await json<RunnerRecord>(await s.call("POST", "/runners", { name: "named-box", labels: [] }), 201);
    const both = await s.call("DELETE", "/runners/named-box");
    expect(both.status).toBe(409);
    const message = ((await both.json()) as { message: string }).message;
    expect(message).toContain(made.id);
    expect(message).toContain(twin.id);
    expect((await s.call("DELETE", `/runners/${twin.id}`)).status).toBe(204);
    expect((await json<RunnerRecord & { revoked_at: string | null }>(await s.call("GET", `/runners/${made.id}`))).revoked_at).toBeNull();
  });

  test("environments take runner_labels and show them", async () => {
    const project = await json<{ slug: string }>(await s.call("POST", "/projects", { name: "labels" }), 201);
    const env = await json<{ id: string; runner_labels: string[] }>(
      await s.call("POST", `/projects/${project.slug}/environments`, { name: "eu", runner_labels: ["eu", "eu", "gpu"] }),
      201,
    );
    expect(env.runner_labels).toEqual(["eu", "gpu"]);
    const updated = await json<{ runner_labels: string[] }>(await s.call("PATCH", `/projects/${project.slug}/environments/${env.id}`, { runner_labels: [] }));
    expect(updated.runner_labels).toEqual([]);
    const bad = await s.call("PATCH", `/projects/${project.slug}/environments/${env.id}`, { runner_labels: ["UPPER"] });
    expect(bad.status).toBe(400);
    expect((await bad.json()).details[0].path).toContain("runner_labels");
  });
});
