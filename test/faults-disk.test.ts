// Disk faults at start, on real filesystems: a read-only data directory (a read-only bind mount or tmpfs) and
// a full disk (a tiny tmpfs filled up) stop `svc serve` with a clear message and a non-zero exit; a disk that
// fills while serving refuses writes with 503 `unavailable`, loses no acknowledged write, corrupts nothing and
// recovers once space is freed. The mounts
// live in a private mount namespace (`unshare --user --map-root-user --mount`, or `unshare --mount` as root where
// user namespaces are off), so nothing stays mounted behind.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { BINARY, requireBinary, runBinary } from "./helpers/binary";
import { tempDir } from "./helpers/server";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * How to enter a private mount namespace here: as an unprivileged user namespace's root where the kernel allows
 * it, else (user namespaces disabled, but running as root) a plain mount namespace.
 */
const UNSHARE = (() => {
  const userNs = ["unshare", "--user", "--map-root-user", "--mount"];
  if (Bun.spawnSync([...userNs, "true"]).exitCode === 0) return userNs;
  return ["unshare", "--mount", "--propagation", "private"];
})();

/** Runs a shell script in a private mount namespace; `$SVC` is the compiled binary. */
async function inMountNamespace(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  requireBinary();
  const proc = Bun.spawn([...UNSHARE, "sh", "-ec", script], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", SVC: BINARY, SVC_LOG_LEVEL: "error" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** The script's last line runs svc and prints its exit code, so a mount failure is told apart from svc's own exit. */
function svcExit(out: { code: number; stdout: string; stderr: string }): { exit: number; stderr: string } {
  const m = /svc-exit=(\d+)/.exec(out.stdout);
  if (!m) throw new Error(`the mount namespace could not be set up (exit ${out.code}): ${out.stderr}`);
  return { exit: Number(m[1]), stderr: out.stderr };
}

/** A temp dir (removed after the file) with an empty mount point `mnt` in it; `data` is the data directory under it. */
function mountPoint(prefix: string): { dir: string; mnt: string; data: string } {
  const dir = tempDir(prefix);
  dirs.push(dir);
  const mnt = join(dir, "mnt");
  mkdirSync(mnt);
  return { dir, mnt, data: join(mnt, "data") };
}

const serve = (dataDir: string) => `set +e; timeout 20 "$SVC" serve --port 0 --data-dir ${quote(dataDir)}; echo svc-exit=$?`;

describe("disk faults (compiled binary)", () => {
  test("an existing data directory with a database, remounted read-only: clear message, exit non-zero", async () => {
    const dir = tempDir("svc-ro-");
    dirs.push(dir);
    const data = join(dir, "data");
    // A real installation first: the database exists and holds a user.
    const made = await runBinary(["admin", "create-user", "--email", "ro@acme.test", "--name", "Ro", "--workspace", "acme", "--data-dir", data]);
    expect(made.code).toBe(0);
    const r = svcExit(await inMountNamespace(`mount --bind ${quote(data)} ${quote(data)}; mount -o remount,ro,bind ${quote(data)}; ${serve(data)}`));
    expect(r.exit).not.toBe(0);
    expect(r.exit).not.toBe(124); // 124 would mean it hung until `timeout` killed it
    expect(r.stderr).toContain(`the data directory ${data} is not writable`);
    expect(r.stderr).toContain("read-only file system");
    expect(r.stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
  }, 30_000);

  test("a data directory to be created on a read-only filesystem: clear message, exit non-zero", async () => {
    const { mnt, data } = mountPoint("svc-rofs-");
    const r = svcExit(await inMountNamespace(`mount -t tmpfs -o ro,size=1m tmpfs ${quote(mnt)}; ${serve(data)}`));
    expect(r.exit).not.toBe(0);
    expect(r.exit).not.toBe(124);
    expect(r.stderr).toContain(`cannot create the data directory ${data}`);
    expect(r.stderr).toContain("read-only file system");
  }, 30_000);

  test("a full disk: clear message naming the full disk, exit 1, and the same again on a second start", async () => {
    const { mnt, data } = mountPoint("svc-full-");
    // 64 KiB of tmpfs, the data directory made, then every free block taken by one file.
    const fill = `mount -t tmpfs -o size=64k tmpfs ${quote(mnt)}; mkdir ${quote(data)}; dd if=/dev/zero of=${quote(join(mnt, "fill"))} bs=4k 2>/dev/null || true`;
    const out = await inMountNamespace(`${fill}; ${serve(data)}; ${serve(data)}`);
    const r = svcExit(out);
    expect(r.exit).toBe(1);
    expect(r.stderr).toContain("database or disk is full");
    expect(r.stderr).toContain("free space on the data directory's filesystem");
    // A second start on the same full disk fails the same clear way: the first attempt left nothing that breaks it differently.
    const exits = [...out.stdout.matchAll(/svc-exit=(\d+)/g)].map((m) => Number(m[1]));
    expect(exits).toEqual([1, 1]);
    expect(out.stderr.match(/database or disk is full/g)?.length).toBe(2);
  }, 30_000);

  test("the disk fills while serving: writes get 503 unavailable, acknowledged writes stay, no corruption, writes resume once space is freed", async () => {
    const { dir, mnt, data } = mountPoint("svc-fill-");
    const ballast = join(mnt, "ballast");
    requireBinary();
    // 3 MiB of tmpfs with 1 MiB of ballast the test removes later to free space.
    const script = [
      `mount -t tmpfs -o size=3m tmpfs ${quote(mnt)}`,
      `dd if=/dev/zero of=${quote(ballast)} bs=1024 count=1024 2>/dev/null`,
      `"$SVC" admin create-user --email f@acme.test --name F --workspace acme --data-dir ${quote(data)} >/dev/null`,
      `echo "key=$("$SVC" admin create-key --email f@acme.test --workspace acme --data-dir ${quote(data)})"`,
      `exec "$SVC" serve --port 0 --data-dir ${quote(data)}`,
    ].join("; ");
    const proc = Bun.spawn([...UNSHARE, "sh", "-ec", script], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", SVC: BINARY, SVC_LOG_LEVEL: "error", SVC_RATE_LIMIT_ENABLED: "false" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    let stdout = "";
    let stderr = "";
    const decoder = new TextDecoder();
    void (async () => {
      for await (const chunk of proc.stdout) stdout += decoder.decode(chunk);
    })();
    void (async () => {
      for await (const chunk of proc.stderr) stderr += decoder.decode(chunk);
    })();
    try {
      const deadline = Date.now() + 15_000;
      while (!/svc listening on (\S+)/.test(stderr) || !/key=(\S+)/.test(stdout)) {
        if (Date.now() > deadline || proc.exitCode !== null) throw new Error(`svc did not start in the mount namespace: ${stderr}`);
        await Bun.sleep(20);
      }
      const url = /svc listening on (\S+)/.exec(stderr)?.[1] ?? "";
      const key = /key=(\S+)/.exec(stdout)?.[1] ?? "";
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const api = `${url}/api/v1/ops`;
      expect((await fetch(`${api}/projects`, { method: "POST", headers, body: '{"name":"Full","slug":"full"}' })).status).toBe(201);

      // Features with 9 KB descriptions until the disk refuses one.
      const description = "x".repeat(9000);
      const acknowledged: string[] = [];
      let refused: Response | null = null;
      for (let i = 0; i < 1000 && !refused; i++) {
        const res = await fetch(`${api}/projects/full/features`, { method: "POST", headers, body: JSON.stringify({ name: `f${i}`, description }) });
        if (res.status === 201) acknowledged.push(((await res.json()) as { id: string }).id);
        else refused = res;
      }
      expect(refused).not.toBeNull();
      if (!refused) return;
      expect(acknowledged.length).toBeGreaterThan(10);
      expect(refused.status).toBe(503);
      const body = (await refused.json()) as { error: string; message: string };
      expect(body.error).toBe("unavailable");
      expect(body.message).toContain("disk is full");
      // The error's log line leaves with the response, but reaches this process through another pipe.
      await waitUntil(() => stderr.includes("the disk holding the database is full"), 3_000);
      expect(stderr).toContain("the disk holding the database is full");
      // Readiness says so too, so a load balancer stops sending writes here.
      const notReady = await fetch(`${url}/readyz`);
      expect(notReady.status).toBe(503);
      const readiness = (await notReady.json()) as { message: string; checks: { disk: { ok: boolean; message: string } } };
      expect(readiness.checks.disk.ok).toBe(false);
      expect(readiness.message).toContain("disk: the disk holding the data directory is full");

      // Reads go on, and every acknowledged write is there.
      const list = async () => {
        const ids = new Set<string>();
        let cursor: string | null = null;
        do {
          const res: Response = await fetch(`${api}/projects/full/features?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers });
          expect(res.status).toBe(200);
          const page = (await res.json()) as { data: { id: string }[]; next_cursor: string | null };
          for (const f of page.data) ids.add(f.id);
          cursor = page.next_cursor;
        } while (cursor);
        return ids;
      };
      const before = await list();
      expect(acknowledged.filter((id) => !before.has(id))).toEqual([]);
      expect(before.size).toBe(acknowledged.length);

      // The operator frees space (the ballast, seen through the server's own mount namespace): writes resume.
      const ballastInNs = `/proc/${proc.pid}/root${ballast}`;
      expect(existsSync(ballastInNs)).toBe(true);
      rmSync(ballastInNs);
      const after = await fetch(`${api}/projects/full/features`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: "after", description: "space again" }),
      });
      expect(after.status).toBe(201);
      // Ready again once the engines have come round (a claim that failed on the full disk is tried each second).
      expect(await waitUntilAsync(async () => (await fetch(`${url}/readyz`)).status === 200, 5_000)).toBe(true);

      // The database is sound: a copy of its files (the server is idle now) passes SQLite's integrity check.
      const copy = join(dir, "copy");
      mkdirSync(copy);
      for (const f of ["svc.sqlite", "svc.sqlite-wal"]) {
        const from = `/proc/${proc.pid}/root${join(data, f)}`;
        if (existsSync(from)) copyFileSync(from, join(copy, f));
      }
      const db = new Database(join(copy, "svc.sqlite"));
      try {
        expect(db.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check).toBe("ok");
        expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM features").get()?.n).toBe(acknowledged.length + 1);
      } finally {
        db.close();
      }
    } finally {
      proc.kill("SIGKILL");
      await proc.exited;
    }
  }, 60_000);
});
