// A Slack channel's incoming-webhook URL is a secret: sealed at rest (the database file holds no trace of it), opened
// only to deliver, rows stored plain before keep delivering and are sealed when written or at the next start, and a
// URL that does not open here fails its deliveries saying so. And the Slack text escapes what members wrote, so a
// name can neither ping the channel nor disguise a link. Against the real server and a real HTTP receiver.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "bun";
import { json, waitForRun } from "./helpers/runs";
import { onPostgres } from "./helpers/postgres";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

/** The part of a Slack URL that is the secret (Slack's are /services/T…/B…/<token>). */
const TOKEN = "tok3n-Sl4ck-s3cret-9f2c";
const INJECTION = "<!channel> <https://evil.test/login|Click to re-authenticate> & more";
const ESCAPED = "&lt;!channel&gt; &lt;https://evil.test/login|Click to re-authenticate&gt; &amp; more";

interface Delivery {
  delivery_id: string;
  status: string;
  attempts: number;
  error: string | null;
}

const dataDir = tempDir("svc-slack-trust-");
let s: TestServer;
let target: TargetApp;
let receiver: Server<undefined>;
let origin: string;
const received: { path: string; body: string }[] = [];
const config = {
  data_dir: dataDir,
  rate_limit: { enabled: false },
  base_url: "https://svc.example.test",
  alerts: { retry_first_ms: 200, retry_max_attempts: 2 },
};

beforeAll(async () => {
  target = startTargetApp();
  receiver = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      received.push({ path: new URL(req.url).pathname, body: await req.text() });
      return new Response("ok");
    },
  });
  origin = `http://127.0.0.1:${receiver.port}`;
  s = await startTestServer(config);
  await json(await s.call("POST", "/projects", { name: "shop" }), 201);
  await json(await s.call("POST", "/projects/shop/environments", { name: "staging", variables: { BASE_URL: target.url } }), 201);
}, 60_000);
afterAll(async () => {
  await s.stop();
  await target.stop();
  await receiver.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

const slackUrl = (name: string) => `${origin}/services/T0SVC/${name}/${TOKEN}`;
const storedUrl = async (id: string) => (await s.sql<{ url: string }>("SELECT url FROM alert_channels WHERE id = ?", id))[0]?.url ?? "";
const posts = (path: string) => received.filter((r) => r.path === path);
async function createSlack(name: string, url: string): Promise<string> {
  return (await json<{ id: string }>(await s.call("POST", "/projects/shop/alert-channels", { name, kind: "slack", url }), 201)).id;
}
/** Sends a test alert to the channel and waits for it to reach `path`. */
async function testReaches(id: string, path: string): Promise<void> {
  const before = posts(path).length;
  await json(await s.call("POST", `/projects/shop/alert-channels/${id}/test`), 202);
  expect(await waitUntil(() => posts(path).length > before, 10_000)).toBe(true);
}
/** The bytes of the SQLite database and its write-ahead log, as a copy of the data directory would hold them. */
function databaseFiles(): string {
  return ["svc.sqlite", "svc.sqlite-wal"]
    .map((f) => join(dataDir, f))
    .filter((p) => existsSync(p))
    .map((p) => readFileSync(p).toString("latin1"))
    .join("");
}

describe("a Slack channel's webhook URL at rest", () => {
  test("is stored sealed: the database (and its file) holds no trace of it, reads show its origin, deliveries reach it", async () => {
    const id = await createSlack("sealed", slackUrl("B1"));
    const stored = await storedUrl(id);
    expect(stored.startsWith("v1.")).toBe(true);
    expect(stored).not.toContain(TOKEN);
    expect(stored).not.toContain("127.0.0.1");
    if (!onPostgres) expect(databaseFiles()).not.toContain(TOKEN);
    const shown = `${origin}/…`;
    expect((await json<{ url: string }>(await s.call("GET", `/projects/shop/alert-channels/${id}`))).url).toBe(shown);
    const listed = await json<{ data: { id: string; url: string }[] }>(await s.call("GET", "/projects/shop/alert-channels"));
    expect(listed.data.find((c) => c.id === id)?.url).toBe(shown);
    await testReaches(id, `/services/T0SVC/B1/${TOKEN}`);

    // An edit sending back what is shown keeps the URL (still sealed); a new URL is sealed in its turn.
    expect((await json<{ url: string }>(await s.call("PATCH", `/projects/shop/alert-channels/${id}`, { name: "sealed", url: shown }))).url).toBe(shown);
    expect((await storedUrl(id)).startsWith("v1.")).toBe(true);
    await testReaches(id, `/services/T0SVC/B1/${TOKEN}`);
    await json(await s.call("PATCH", `/projects/shop/alert-channels/${id}`, { url: slackUrl("B2") }));
    expect(await storedUrl(id)).not.toContain(TOKEN);
    await testReaches(id, `/services/T0SVC/B2/${TOKEN}`);
    if (!onPostgres) expect(databaseFiles()).not.toContain(TOKEN);
  }, 30_000);

  test("a URL stored in plain text before URLs were sealed still delivers, and is sealed when its channel is next written", async () => {
    const id = await createSlack("legacy", slackUrl("B3"));
    await s.sql("UPDATE alert_channels SET url = ? WHERE id = ?", slackUrl("B3"), id);
    expect((await json<{ url: string }>(await s.call("GET", `/projects/shop/alert-channels/${id}`))).url).toBe(`${origin}/…`);
    await testReaches(id, `/services/T0SVC/B3/${TOKEN}`);
    await json(await s.call("PATCH", `/projects/shop/alert-channels/${id}`, { remind_every: 3600 }));
    const stored = await storedUrl(id);
    expect(stored.startsWith("v1.")).toBe(true);
    expect(stored).not.toContain(TOKEN);
    await testReaches(id, `/services/T0SVC/B3/${TOKEN}`);
  }, 30_000);

  test("a sealed URL that does not open here (moved from another channel) fails its delivery saying so; a new URL mends it", async () => {
    const from = await createSlack("moved from", slackUrl("B4"));
    const to = await createSlack("moved to", slackUrl("B5"));
    await s.sql("UPDATE alert_channels SET url = ? WHERE id = ?", await storedUrl(from), to);
    expect((await json<{ url: string }>(await s.call("GET", `/projects/shop/alert-channels/${to}`))).url).toBe("…");
    // An edit of something else keeps the stored URL as it is.
    await json(await s.call("PATCH", `/projects/shop/alert-channels/${to}`, { name: "moved to", url: "…" }));
    const sent = await json<Delivery>(await s.call("POST", `/projects/shop/alert-channels/${to}/test`), 202);
    const list = async () => (await json<{ data: Delivery[] }>(await s.call("GET", `/projects/shop/alert-channels/${to}/deliveries`))).data;
    expect(await waitUntilAsync(async () => (await list()).some((d) => d.delivery_id === sent.delivery_id && d.status === "failed"), 10_000)).toBe(true);
    expect((await list()).find((d) => d.delivery_id === sent.delivery_id)?.error).toContain("cannot be opened with this server's secrets key");
    expect(posts(`/services/T0SVC/B4/${TOKEN}`)).toHaveLength(0);
    await json(await s.call("PATCH", `/projects/shop/alert-channels/${to}`, { url: slackUrl("B5") }));
    await testReaches(to, `/services/T0SVC/B5/${TOKEN}`);
  }, 30_000);

  test("URLs stored in plain text are sealed at the next start, the channel's version unchanged, and still deliver", async () => {
    const id = await createSlack("restarted", slackUrl("B6"));
    await s.sql("UPDATE alert_channels SET url = ? WHERE id = ?", slackUrl("B6"), id);
    const before = await json<{ updated_at: string }>(await s.call("GET", `/projects/shop/alert-channels/${id}`));
    await s.stop();
    s = await startTestServer(config);
    const stored = await storedUrl(id);
    expect(stored.startsWith("v1.")).toBe(true);
    expect(stored).not.toContain(TOKEN);
    // And no trace of it stays in the file or its write-ahead log.
    if (!onPostgres) expect(databaseFiles()).not.toContain(TOKEN);
    expect((await json<{ updated_at: string }>(await s.call("GET", `/projects/shop/alert-channels/${id}`))).updated_at).toBe(before.updated_at);
    await testReaches(id, `/services/T0SVC/B6/${TOKEN}`);
  }, 60_000);
});

describe("Slack alert text", () => {
  const textAt = (path: string) => (JSON.parse(posts(path).at(-1)?.body ?? "{}") as { text?: string }).text ?? "";

  test("escapes names, messages and errors members wrote (&amp; &lt; &gt;): no ping, no disguised link; svc's run link stays whole", async () => {
    const id = await createSlack(`${INJECTION} ops`, slackUrl("B7"));
    const path = `/services/T0SVC/B7/${TOKEN}`;
    await testReaches(id, path);
    expect(textAt(path)).toBe(`[svc shop] channel "${ESCAPED} ops" test alert`);

    // An automation named to ping everyone, failing: its alert names it escaped, with the run page's link as built.
    const auto = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/automations", {
        name: INJECTION,
        kind: "http",
        environment: "staging",
        steps: [{ request: { url: "/health" }, expect: [{ status: 418 }] }],
      }),
      201,
    );
    const run = await json<{ id: string }>(await s.call("POST", `/projects/shop/automations/${auto.id}/run`, {}), 202);
    expect((await waitForRun(s, "shop", run.id)).status).toBe("failed");
    expect(await waitUntil(() => posts(path).some((p) => p.body.includes("is failing")), 10_000)).toBe(true);
    const failing = textAt(path);
    expect(failing).toBe(`[svc shop] automation "${ESCAPED}" in staging is failing — run failed: https://svc.example.test/#/p/shop/runs/${run.id}`);
    expect(failing).not.toMatch(/[<>]/);

    // A schedule's name and its error (naming the tags a member gave) are escaped too.
    const ghost = await json<{ id: string }>(
      await s.call("POST", "/projects/shop/schedules", { name: `${INJECTION} nightly`, target: { tags: ["<!here>"] }, interval_seconds: 3600 }),
      201,
    );
    await s.sql("UPDATE schedules SET next_run_at = ? WHERE id = ?", new Date(Date.now() - 1000).toISOString(), ghost.id);
    expect(await waitUntil(() => posts(path).some((p) => p.body.includes("could not start its runs")), 15_000)).toBe(true);
    const failed = textAt(path);
    expect(failed).toStartWith(`[svc shop] schedule "${ESCAPED} nightly" could not start its runs — `);
    expect(failed).toContain("&lt;!here&gt;");
    expect(failed).not.toMatch(/[<>]/);
  }, 60_000);
});
