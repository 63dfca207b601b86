// Run artifacts in an S3-compatible bucket (`[artifacts.s3]`), against a real S3 server (s3rver) on a free port:
// a screenshot becomes an object under the configured prefix and its row keeps only the object's key and size; the
// API serves it from the bucket; retention and deleting a project delete the objects within seconds; an object gone
// from the bucket is a 404, a bucket that does not answer a 503; a bucket that is missing stops the server at start.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { loadConfig } from "../config/load";
import { startServer } from "../src/server";
import { createAutomation, projectWithEnv, startRun, waitForRun } from "./helpers/runs";
import { type S3Bucket, startS3 } from "./helpers/s3";
import { startTestServer, tempDir } from "./helpers/server";
import { waitUntilAsync } from "./helpers/wait";

/** A proxy in front of the bucket that refuses to delete keys holding "blocked" (403 AccessDenied, as a bucket
 * policy scoped to a prefix would), passing everything else through. */
function refusingDeletes(to: string): { endpoint: string; stop(): void } {
  const proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      if (req.method === "DELETE" && url.pathname.includes("blocked"))
        return new Response('<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>', {
          status: 403,
          headers: { "content-type": "application/xml" },
        });
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      return fetch(`${to}${url.pathname}${url.search}`, { method: req.method, headers: req.headers, body });
    },
  });
  return { endpoint: `http://127.0.0.1:${proxy.port}`, stop: () => proxy.stop(true) };
}

// A browser run starts chromium: seconds on a busy machine.
setDefaultTimeout(120_000);

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];
let target: ReturnType<typeof Bun.serve>;
let s3: S3Bucket;
beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response("<!doctype html><title>Home</title><h1>Welcome</h1>", { headers: { "content-type": "text/html" } }),
  });
  s3 = await startS3();
});
afterAll(async () => {
  await target.stop(true);
  await s3.stop();
});

const screenshotAutomation = (envId: string) => ({
  name: "home",
  kind: "browser",
  environment: envId,
  steps: [{ goto: "/" }, { screenshot: "home" }],
});

test("a screenshot is an object in the bucket under the prefix, its row holds only the key; the API serves it; retention deletes the object", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, retention: { max_runs_per_automation: 1 }, artifacts: { s3: s3.settings("team-a/") } });
  try {
    const ready = (await (await fetch(`${s.url}/readyz`)).json()) as { checks: { engines: Record<string, unknown> } };
    expect(ready.checks.engines.artifacts).toEqual({ ok: true });
    const { project, envId } = await projectWithEnv(s, "Shots", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const id = await createAutomation(s, project, screenshotAutomation(envId));
    const first = await waitForRun(s, project, await startRun(s, project, id), 90_000);
    expect(first.status).toBe("passed");
    const name = (first as unknown as { artifacts: string[] }).artifacts[0] ?? "";
    expect(name).toMatch(/home\.png$/);

    const key = `team-a/${first.id}/${name}`;
    const object = new Uint8Array(await s3.client.file(key).arrayBuffer());
    expect([...object.slice(0, 4)]).toEqual(PNG_MAGIC);
    const rows = await s.sql<{ size: number; object_key: string; stored: number }>(
      "SELECT size, object_key, length(bytes) AS stored FROM run_artifacts WHERE run_id = ?",
      first.id,
    );
    expect(rows).toEqual([{ size: object.byteLength, object_key: key, stored: 0 }]);

    const res = await s.call("GET", `/projects/${project}/runs/${first.id}/artifacts/${name}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(object);

    // A second run puts the first beyond max_runs_per_automation: retention removes it, and its object goes too.
    const second = await waitForRun(s, project, await startRun(s, project, id), 90_000);
    expect(second.status).toBe("passed");
    expect(await waitUntilAsync(async () => (await s.call("GET", `/projects/${project}/runs/${first.id}`)).status === 404, 15_000, 100)).toBe(true);
    expect(await waitUntilAsync(async () => !(await s3.client.exists(key)), 10_000, 100)).toBe(true);
    // The engine forgets its note once the batch's deletes are done: just after the object goes, it may still be there.
    await waitUntilAsync(async () => (await s.sql("SELECT object_key FROM artifact_deletions")).length === 0, 10_000, 100);
    expect(await s.sql("SELECT object_key FROM artifact_deletions")).toEqual([]);
    // The second run's object is untouched.
    expect(await s3.client.exists(`team-a/${second.id}/${name}`)).toBe(true);
  } finally {
    await s.stop();
  }
});

test("deleting a project deletes its runs' objects; an object gone from the bucket is a 404; a bucket that does not answer is a 503", async () => {
  const s = await startTestServer({ rate_limit: { enabled: false }, artifacts: { s3: s3.settings("team-b/") } });
  try {
    const { project, envId } = await projectWithEnv(s, "Shots", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const id = await createAutomation(s, project, screenshotAutomation(envId));
    const runs = [];
    for (let i = 0; i < 2; i++) runs.push(await waitForRun(s, project, await startRun(s, project, id), 90_000));
    const name = (runs[0] as unknown as { artifacts: string[] }).artifacts[0] ?? "";
    const keys = runs.map((r) => `team-b/${r.id}/${name}`);
    for (const k of keys) expect(await s3.client.exists(k)).toBe(true);

    // Removed from the bucket behind svc's back: the artifact is not found, and nothing else breaks.
    await s3.client.delete(keys[0] as string);
    const gone = await s.call("GET", `/projects/${project}/runs/${runs[0]?.id}/artifacts/${name}`);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: string }).error).toBe("not_found");

    expect((await s.call("DELETE", `/projects/${project}`)).status).toBe(204);
    expect(await waitUntilAsync(async () => !(await s3.client.exists(keys[1] as string)), 10_000, 100)).toBe(true);
    // The engine forgets its notes once the batch's deletes are done: just after the object goes, they may still be there.
    await waitUntilAsync(async () => (await s.sql("SELECT object_key FROM artifact_deletions")).length === 0, 10_000, 100);
    expect(await s.sql("SELECT object_key FROM artifact_deletions")).toEqual([]);
  } finally {
    await s.stop();
  }

  // The bucket stops answering while the server runs: serving an artifact kept there is a 503 saying so, quickly.
  const down = await startS3("svc-down");
  const t = await startTestServer({ rate_limit: { enabled: false }, artifacts: { s3: down.settings() } });
  try {
    const { project, envId } = await projectWithEnv(t, "Shots", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const run = await waitForRun(t, project, await startRun(t, project, await createAutomation(t, project, screenshotAutomation(envId))), 90_000);
    const name = (run as unknown as { artifacts: string[] }).artifacts[0] ?? "";
    await down.stop();
    const res = await t.call("GET", `/projects/${project}/runs/${run.id}/artifacts/${name}`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: string; message: string };
    expect(body.error).toBe("unavailable");
    expect(body.message).toContain("bucket");
  } finally {
    await t.stop();
  }
});

test("a bucket that does not exist stops the server at start, naming artifacts.s3 and never the secret", async () => {
  const dir = tempDir();
  const config = loadConfig({
    env: {},
    flags: {
      port: 0,
      data_dir: dir,
      log_level: "warn",
      "artifacts.s3.bucket": "no-such-bucket",
      "artifacts.s3.endpoint": s3.endpoint,
      "artifacts.s3.access_key_id": "S3RVER",
      "artifacts.s3.secret_access_key": "S3RVER-very-secret",
    },
  });
  const error = await startServer(config).then(
    async (running) => {
      await running.stop();
      return null;
    },
    (e: Error) => e.message,
  );
  expect(error).toContain("artifacts.s3");
  expect(error).toContain("no-such-bucket");
  expect(error).not.toContain("S3RVER-very-secret");
});

test("a copy of the database with its own prefix never deletes the original's objects; an object a row still names is never deleted", async () => {
  const dataDir = tempDir();
  const original = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false }, artifacts: { s3: s3.settings("orig/") } });
  let project = "";
  let key = "";
  try {
    const made = await projectWithEnv(original, "Shots", { BASE_URL: `http://127.0.0.1:${target.port}` });
    project = made.project;
    const run = await waitForRun(
      original,
      project,
      await startRun(original, project, await createAutomation(original, project, screenshotAutomation(made.envId))),
      90_000,
    );
    key = `orig/${run.id}/${(run as unknown as { artifacts: string[] }).artifacts[0]}`;
    expect(await s3.client.exists(key)).toBe(true);
    // A note for an object a row still names (a write that failed once, then succeeded on a retried attempt): kept.
    await original.sql("INSERT INTO artifact_deletions (object_key, created_at) VALUES (?, ?)", key, new Date(Date.now() - 1000).toISOString());
    expect(await waitUntilAsync(async () => (await original.sql("SELECT object_key FROM artifact_deletions")).length === 0, 10_000, 100)).toBe(true);
    expect(await s3.client.exists(key)).toBe(true);
  } finally {
    await original.stop();
  }
  // The same database under another prefix, as a restored copy sharing the bucket would be: it serves the
  // original's object, and deleting the project there leaves it in the bucket.
  const copy = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false }, artifacts: { s3: s3.settings("copy/") } });
  try {
    const runId = key.split("/")[1];
    const served = await copy.call("GET", `/projects/${project}/runs/${runId}/artifacts/${key.split("/")[2]}`);
    expect(served.status).toBe(200);
    expect((await copy.call("DELETE", `/projects/${project}`)).status).toBe(204);
    expect(await waitUntilAsync(async () => (await copy.sql("SELECT object_key FROM artifact_deletions")).length === 0, 10_000, 100)).toBe(true);
    expect(await s3.client.exists(key)).toBe(true);
  } finally {
    await copy.stop();
  }
});

test("a delete the bucket refuses is tried again later while the others go on", async () => {
  const proxy = refusingDeletes(s3.endpoint);
  const s = await startTestServer({ rate_limit: { enabled: false }, artifacts: { s3: { ...s3.settings("refuse/"), endpoint: proxy.endpoint } } });
  try {
    const keys = ["refuse/run_a/blocked.png", "refuse/run_b/shot.png", "refuse/run_c/shot.png"];
    for (const k of keys) await s3.client.write(k, "x");
    const past = new Date(Date.now() - 1000).toISOString();
    for (const k of keys) await s.sql("INSERT INTO artifact_deletions (object_key, created_at) VALUES (?, ?)", k, past);
    expect(await waitUntilAsync(async () => (await s.sql("SELECT object_key FROM artifact_deletions")).length === 1, 10_000, 100)).toBe(true);
    expect(await s3.client.exists("refuse/run_b/shot.png")).toBe(false);
    expect(await s3.client.exists("refuse/run_c/shot.png")).toBe(false);
    expect(await s3.client.exists("refuse/run_a/blocked.png")).toBe(true);
    const [left] = await s.sql<{ object_key: string; created_at: string }>("SELECT object_key, created_at FROM artifact_deletions");
    expect(left?.object_key).toBe("refuse/run_a/blocked.png");
    // Tried again in an hour, not at every look.
    expect(Date.parse(String(left?.created_at)) - Date.now()).toBeGreaterThan(50 * 60_000);
  } finally {
    await s.stop();
    proxy.stop();
  }
});

test("a bucket down while a run takes a screenshot: the step errs without the bucket's address, the server logs why; a bucket down at start does not stop the server", async () => {
  const down = await startS3("svc-flaky");
  const t = await startTestServer({ rate_limit: { enabled: false }, artifacts: { s3: down.settings("flaky/") } });
  try {
    const { project, envId } = await projectWithEnv(t, "Shots", { BASE_URL: `http://127.0.0.1:${target.port}` });
    const id = await createAutomation(t, project, screenshotAutomation(envId));
    await down.stop();
    const run = (await waitForRun(t, project, await startRun(t, project, id), 90_000)) as unknown as {
      status: string;
      artifacts: string[];
      steps: { status: string; message: string | null }[];
    };
    expect(run.status).toBe("error");
    expect(run.artifacts).toEqual([]);
    const shot = run.steps[1];
    expect(shot?.status).toBe("error");
    expect(shot?.message).toContain("was taken but could not be kept: the artifacts bucket refused it or did not answer");
    expect(shot?.message).not.toContain(new URL(down.endpoint).port);
    // The writes may still land: their objects (the step's and the failure's screenshot) are noted for deletion later.
    const notes = await t.sql<{ object_key: string; created_at: string }>("SELECT object_key, created_at FROM artifact_deletions ORDER BY object_key");
    expect(notes.map((n) => n.object_key.replace(/run_\w+/, "RUN"))).toEqual(["flaky/RUN/02-failure.png", "flaky/RUN/02-home.png"]);
    expect(Date.parse(String(notes[0]?.created_at))).toBeGreaterThan(Date.now() + 60_000);
  } finally {
    await t.stop();
  }
  // Down at start (nothing listens there now): the server starts and is ready; screenshots wait for the bucket.
  const again = await startTestServer({ rate_limit: { enabled: false }, artifacts: { s3: down.settings("flaky/") } });
  try {
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
  } finally {
    await again.stop();
  }
});

test("an artifacts.s3 prefix with a dot segment or a leading slash is refused at start, naming the key", () => {
  for (const prefix of ["../esc/", "/x/", "a//b/", "a/./b/"]) {
    expect(() => loadConfig({ env: {}, flags: { "artifacts.s3.bucket": "b", "artifacts.s3.prefix": prefix } })).toThrow(
      "artifacts.s3.prefix (or SVC_ARTIFACTS_S3_PREFIX): a plain key start",
    );
  }
  expect(loadConfig({ env: {}, flags: { "artifacts.s3.bucket": "b", "artifacts.s3.prefix": "team-a/svc/" } }).artifacts.s3.prefix).toBe("team-a/svc/");
});
