// Secrets at rest: refused when too short to mask, encrypted in the database with a key kept outside it (a
// 0600 file, or secrets.key_file), so the database file or a backup alone reveals none; a restore needs the key;
// secrets an older svc stored in plain text are encrypted at the first start.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config/load";
import { backupDataDir, restoreDataDir } from "../src/commands/backup";
import { startServer } from "../src/server";
import { databaseBefore } from "./helpers/old-database";
import { startTestServer, tempDir, type TestServer } from "./helpers/server";
import { json, projectWithEnv, runToEnd } from "./helpers/runs";
import { startTargetApp, type TargetApp } from "./helpers/target-app";

const SECRET = "prod-Tok3n-5e9b1c77";

let target: TargetApp;
beforeAll(() => {
  target = startTargetApp();
});
afterAll(async () => {
  await target.stop();
});

/** Every file of a directory (database, WAL, backups) as one text, to look for the secret in. */
const filesText = (dir: string): string =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name)).toString("latin1"))
    .join("\n");

/** An http automation that sends the secret; the target app records what arrived. */
const sendsSecret = (name: string) => ({
  name,
  kind: "http",
  environment: "test",
  steps: [{ request: { url: "/echo", headers: { authorization: "Bearer {{TOKEN}}" } }, expect: [{ status: 200 }] }],
});
const arrived = () => target.seen.filter((r) => r.headers.authorization === `Bearer ${SECRET}`).length;

describe("a secret too short to mask", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ rate_limit: { enabled: false } });
  });
  afterAll(() => s.stop());

  test("is refused when saved, with a 400 naming the secret, and nothing is created or changed", async () => {
    await json(await s.call("POST", "/projects", { name: "short" }), 201);
    const res = await s.call("POST", "/projects/short/environments", { name: "prod", secrets: { PIN: "1234567" } });
    const body = await json<{ error: string; message: string; details: { path: string; message: string }[] }>(res, 400);
    expect(body.error).toBe("invalid_request");
    expect(body.details).toEqual([{ path: "body.secrets.PIN", message: "too short to mask safely: a secret needs at least 8 characters" }]);
    expect((await json<{ data: unknown[] }>(await s.call("GET", "/projects/short/environments"))).data).toEqual([]);

    await json(await s.call("POST", "/projects/short/environments", { name: "prod", secrets: { PIN: "12345678" } }), 201);
    const update = await s.call("PATCH", "/projects/short/environments/prod", { secrets: { PIN: "x", OTHER: "long enough" } });
    expect((await json<{ details: { path: string }[] }>(update, 400)).details.map((d) => d.path)).toEqual(["body.secrets.PIN"]);
    expect((await json<{ secret_names: string[] }>(await s.call("GET", "/projects/short/environments/prod"))).secret_names).toEqual(["PIN"]);
  });

  test("a one-run secret too short is refused the same way, and nothing is queued", async () => {
    await json(
      await s.call("POST", "/projects/short/automations", { name: "uses pin", kind: "http", steps: [{ request: { url: "http://127.0.0.1:9/" } }] }),
      201,
    );
    const res = await s.call("POST", "/projects/short/automations/uses%20pin/run", { secrets: { PIN: "e" } });
    const body = await json<{ error: string; details: { path: string; message: string }[] }>(res, 400);
    expect(body.details).toEqual([{ path: "body.secrets.PIN", message: "too short to mask safely: a secret needs at least 8 characters" }]);
    const selection = await s.call("POST", "/projects/short/runs", { automations: ["uses pin"], secrets: { PIN: "1234567" } });
    expect((await json<{ details: { path: string }[] }>(selection, 400)).details.map((d) => d.path)).toEqual(["body.secrets.PIN"]);
    expect((await json<{ data: unknown[] }>(await s.call("GET", "/projects/short/runs"))).data).toEqual([]);
  });

  test("an applied environment's secret too short is refused at its line, and nothing is applied", async () => {
    const documents = [
      { path: "auto.yaml", text: "name: applied check\nkind: http\nsteps:\n  - request:\n      url: http://127.0.0.1:9/\n" },
      { path: "env.yaml", text: "type: environment\nname: ci\nsecrets:\n  TOKEN: CI_TOKEN\n" },
    ];
    const res = await s.call("POST", "/projects/short/apply", { documents, secrets: { CI_TOKEN: "abc" } });
    const body = await json<{ message: string; details: { path: string; message: string }[] }>(res, 400);
    expect(body.details[0]?.message).toContain("the environment variable CI_TOKEN is too short to mask safely: a secret needs at least 8 characters");
    expect(body.details[0]?.path).toContain("env.yaml");
    const names = (await json<{ data: { name: string }[] }>(await s.call("GET", "/projects/short/automations"))).data.map((a) => a.name);
    expect(names).toEqual(["uses pin"]);
    expect((await json<{ data: { name: string }[] }>(await s.call("GET", "/projects/short/environments"))).data.map((e) => e.name)).toEqual(["prod"]);
    await json(await s.call("POST", "/projects/short/apply", { documents, secrets: { CI_TOKEN: "abc-long-enough" } }), 200);
  });
});

describe("secrets at rest", () => {
  const dataDir = tempDir("svc-secrets-");
  const backups = tempDir("svc-secrets-backup-");
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(backups, { recursive: true, force: true });
  });

  test("are encrypted with a key created 0600 in the data directory: the database and a backup hold no secret, runs still send it", async () => {
    const s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
    try {
      const key = join(dataDir, "secrets.key");
      expect(statSync(key).mode & 0o777).toBe(0o600);
      // The database beside it (hashes, results) and its log are the server's user's alone too.
      expect(statSync(join(dataDir, "svc.sqlite")).mode & 0o777).toBe(0o600);
      expect(statSync(join(dataDir, "svc.sqlite-wal")).mode & 0o777).toBe(0o600);
      const { project } = await projectWithEnv(s, "at rest", { BASE_URL: target.url }, { TOKEN: SECRET });
      const before = arrived();
      expect((await runToEnd(s, project, sendsSecret("sends"))).status).toBe("passed");
      expect(arrived()).toBe(before + 1);
      backupDataDir(dataDir, join(backups, "svc.sqlite"), 5000);
    } finally {
      await s.stop();
    }
    expect(filesText(dataDir)).toContain("v1.");
    for (const dir of [dataDir, backups]) expect(filesText(dir)).not.toContain(SECRET);
    expect(existsSync(join(backups, "secrets.key"))).toBe(false);
  });

  test("a backup restored without its key is refused at start with what to do; with the key it runs", async () => {
    const restored = tempDir("svc-secrets-restored-");
    try {
      restoreDataDir(join(backups, "svc.sqlite"), restored, false);
      const config = loadConfig({ env: {}, flags: { port: 0, data_dir: restored, log_level: "silent" } });
      let refused: Error | null = null;
      await startServer(config).then(
        (r) => r.stop(),
        (e: Error) => (refused = e),
      );
      expect(refused).not.toBeNull();
      expect(String(refused)).toContain(`the secrets key ${join(restored, "secrets.key")} does not exist: restore the key file`);
      expect(existsSync(join(restored, "secrets.key"))).toBe(false);

      copyFileSync(join(dataDir, "secrets.key"), join(restored, "secrets.key"));
      const s = await startTestServer({ data_dir: restored, rate_limit: { enabled: false } });
      try {
        const before = arrived();
        const again = await runToEnd(s, "at-rest", sendsSecret("after restore"));
        expect(again.status).toBe("passed");
        expect(arrived()).toBe(before + 1);
      } finally {
        await s.stop();
      }
    } finally {
      rmSync(restored, { recursive: true, force: true });
    }
  });

  test("a key that belongs with another database is refused at start", async () => {
    const other = tempDir("svc-secrets-other-");
    const elsewhere = tempDir("svc-secrets-otherkey-");
    try {
      restoreDataDir(join(backups, "svc.sqlite"), other, false);
      // A fresh server creates its own key: not the one that sealed the backup's secrets.
      await (await startTestServer({ data_dir: elsewhere })).stop();
      copyFileSync(join(elsewhere, "secrets.key"), join(other, "secrets.key"));
      const config = loadConfig({ env: {}, flags: { port: 0, data_dir: other, log_level: "silent" } });
      let refused: Error | null = null;
      await startServer(config).then(
        (r) => r.stop(),
        (e: Error) => (refused = e),
      );
      expect(String(refused)).toContain("does not open the secrets in this database");
    } finally {
      rmSync(other, { recursive: true, force: true });
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

test("secrets.key_file puts the key outside the data directory", async () => {
  const dataDir = tempDir("svc-secrets-keyfile-");
  const keyDir = tempDir("svc-secrets-keydir-");
  try {
    const s = await startTestServer({ data_dir: dataDir, secrets: { key_file: join(keyDir, "svc.key") } });
    await s.stop();
    expect(statSync(join(keyDir, "svc.key")).mode & 0o777).toBe(0o600);
    expect(existsSync(join(dataDir, "secrets.key"))).toBe(false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(keyDir, { recursive: true, force: true });
  }
});

test("secrets an older svc stored in plain text are encrypted at the first start, and runs still use them", async () => {
  const dataDir = tempDir("svc-secrets-legacy-");
  try {
    // A database as the svc before encrypted secrets left it, with an environment holding a plain secret.
    const file = join(dataDir, "svc.sqlite");
    await databaseBefore(file, "0004");
    const raw = new Database(file);
    const t = new Date().toISOString();
    raw.run("INSERT INTO workspaces (id, slug, name, created_at, updated_at) VALUES ('ws_legacy', 'acme', 'acme', ?1, ?1)", [t]);
    raw.run(
      "INSERT INTO projects (id, workspace_id, slug, name, description, openapi, created_at, updated_at) VALUES ('prj_legacy', 'ws_legacy', 'legacy', 'legacy', '', NULL, ?1, ?1)",
      [t],
    );
    raw.run(
      "INSERT INTO environments (id, project_id, name, variables, secrets, created_at, updated_at) VALUES ('env_legacy', 'prj_legacy', 'test', ?1, ?2, ?3, ?3)",
      [JSON.stringify({ BASE_URL: target.url }), JSON.stringify({ TOKEN: SECRET }), t],
    );
    raw.close();

    const s = await startTestServer({ data_dir: dataDir, rate_limit: { enabled: false } });
    try {
      const before = arrived();
      const run = await runToEnd(s, "legacy", sendsSecret("legacy"));
      expect(run.status).toBe("passed");
      expect(arrived()).toBe(before + 1);
      expect((await json<{ secret_names: string[] }>(await s.call("GET", "/projects/legacy/environments/test"))).secret_names).toEqual(["TOKEN"]);
    } finally {
      await s.stop();
    }
    expect(filesText(dataDir)).not.toContain(SECRET);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
