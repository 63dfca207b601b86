// The run workers' HOME in the temporary directory: each server makes its own, removes it when it stops, and the
// next start removes those of servers that were killed (SIGKILL) before they could. Another live process's, one
// named in another PID namespace (a temporary directory shared by containers), or another user's is never touched.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type ServeProcess, startServe } from "./helpers/binary";
import { tempDir } from "./helpers/server";
import { waitUntil } from "./helpers/wait";

let tmp: string;
let dataDir: string;
const servers: ServeProcess[] = [];
const ns = /\[(\d+)\]/.exec(readlinkSync("/proc/self/ns/pid"))?.[1] ?? "0";

beforeAll(() => {
  tmp = tempDir("svc-homes-tmp-");
  // As /tmp is: workers running as nobody (a server started as root) reach their HOME in it.
  chmodSync(tmp, 0o1777);
  dataDir = tempDir("svc-homes-data-");
});
afterAll(async () => {
  for (const s of servers) if (s.proc.exitCode === null) await s.stop("SIGKILL");
  rmSync(tmp, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

const serve = async () => {
  const s = await startServe(["--data-dir", dataDir], { env: { TMPDIR: tmp, SVC_RUNNER_WORKERS: "1" } });
  servers.push(s);
  return s;
};
const homesOf = (pid: number) => readdirSync(tmp).filter((n) => n.startsWith(`svc-worker-${ns}-${pid}-`));

/** The id of a process that has ended. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

test("a killed server's worker HOME is removed by the next start; live and foreign ones are kept", async () => {
  const dead = await deadPid();
  const orphan = join(tmp, `svc-worker-${ns}-${dead}-Ab3dE9`);
  const live = join(tmp, `svc-worker-${ns}-${process.pid}-Ab3dE9`);
  const foreign = join(tmp, `svc-worker-1${ns}-${dead}-Ab3dE9`);
  const unrelated = join(tmp, "svc-worker-notes");
  // Named as an orphan, but another local user's (a shared temporary directory): not the server's to remove.
  const othersOrphan = join(tmp, `svc-worker-${ns}-${dead}-Zz9yX8`);
  for (const d of [orphan, live, foreign, unrelated, othersOrphan]) mkdirSync(d);
  chownSync(othersOrphan, 4242, 4242);

  const a = await serve();
  expect(existsSync(orphan)).toBe(false);
  for (const d of [live, foreign, unrelated, othersOrphan]) expect(existsSync(d)).toBe(true);
  expect(homesOf(a.proc.pid)).toHaveLength(1);

  // SIGKILL: no chance to clean up; its workers die with it (parent-death signal), its HOME stays behind.
  await a.stop("SIGKILL");
  expect(homesOf(a.proc.pid)).toHaveLength(1);

  const b = await serve();
  expect(homesOf(a.proc.pid)).toHaveLength(0);
  expect(homesOf(b.proc.pid)).toHaveLength(1);
  for (const d of [live, foreign, unrelated, othersOrphan]) expect(existsSync(d)).toBe(true);

  // A clean stop removes its own.
  expect(await b.stop("SIGTERM")).toBe(0);
  await waitUntil(() => homesOf(b.proc.pid).length === 0, 5_000);
  expect(homesOf(b.proc.pid)).toHaveLength(0);
}, 60_000);
