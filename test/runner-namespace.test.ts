// A server that does not run as root (the svc user of the systemd unit): its run workers get user and mount
// namespaces of their own (and a PID namespace where /proc can be mounted anew) that hide the data directory, the
// secrets key and the config file, and they still run http and browser runs. The compiled binary is run as an
// unprivileged user: `nobody` when the suite runs as root, else the suite's own user.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chownSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { apiClient, copyBinary, type ServeProcess, startServe } from "./helpers/binary";
import { tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const NOBODY = 65534;
const root = process.getuid?.() === 0;
/** What runs a command as the unprivileged user. */
const asUser = (cmd: string[]) => (root ? ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "--", ...cmd] : cmd);

let work: string;
let binary: string;
let data: string;
let configFile: string;
let server: ServeProcess;
let target: TargetApp;
let key: string;

function run(cmd: string[]): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync(asUser(cmd), { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work }, cwd: work, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** Whether this machine lets an unprivileged user make user and mount namespaces (what the server tries). */
function namespacesAvailable(): boolean {
  return run(["unshare", "--user", "--map-root-user", "--mount", "--", "true"]).code === 0;
}

function statusOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return "";
  }
}

/** The processes below `pid` whose command is the run worker's. */
function workersBelow(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = Number(/PPid:\s+(\d+)/.exec(statusOf(Number(name)))?.[1]);
    parent.set(Number(name), ppid);
  }
  const below = (p: number) => {
    for (let q = parent.get(p); q !== undefined && q > 1; q = parent.get(q)) if (q === pid) return true;
    return false;
  };
  return [...parent.keys()].filter((p) => {
    if (!below(p)) return false;
    try {
      return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0")[1] === "__run-worker";
    } catch {
      return false;
    }
  });
}

beforeAll(async () => {
  target = startTargetApp();
  work = tempDir("svc-namespace-");
  // The user must reach the executable and own the data: a copy in the user's own directory.
  binary = copyBinary(work);
  data = join(work, "data");
  configFile = join(work, "svc.toml");
  writeFileSync(configFile, 'log_level = "info"\n');
  if (root) {
    chownSync(work, NOBODY, NOBODY);
    chownSync(configFile, NOBODY, NOBODY);
  }
  expect(run([binary, "admin", "create-user", "--email", "nina@acme.test", "--name", "Nina", "--workspace", "acme", "--data-dir", data]).code).toBe(0);
  const created = run([binary, "admin", "create-key", "--email", "nina@acme.test", "--workspace", "acme", "--data-dir", data]);
  expect(created.code).toBe(0);
  key = created.stdout.trim();
  server = await startServe(["--data-dir", data, "--config", configFile], {
    command: asUser([binary]),
    cwd: work,
    env: { HOME: work, SVC_RUNNER_WORKERS: "1", SVC_RUNNER_CONCURRENCY: "2" },
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await target?.stop();
});

test("workers of a server that is not root run in namespaces that hide its files, and still run http and browser runs", async () => {
  const readyz = async () => (await (await fetch(`${server.url}/readyz`)).json()) as { checks: { workers: Record<string, unknown> } };
  // Workers report once started (and what they could open).
  await waitUntilAsync(async () => (await readyz()).checks.workers.ready === 1, 15_000);
  const ready = await readyz();
  if (!namespacesAvailable()) {
    // A machine without unprivileged user namespaces: isolation by construction, and /readyz says so.
    expect(ready.checks.workers).toMatchObject({ ok: true, isolation: "construction" });
    return;
  }
  // The worker tried to open the database when it started, and could not.
  expect(ready.checks.workers).toMatchObject({ ok: true, isolation: "namespace", workers: 1, database_readable: false });
  const pid = server.proc.pid;
  const [worker] = workersBelow(pid);
  expect(worker).toBeDefined();
  const status = statusOf(worker as number);
  expect(Number(/Uid:\s+(\d+)/.exec(status)?.[1])).toBe(root ? NOBODY : (process.getuid?.() ?? -1));
  // Its own mounts: an empty tmpfs over the data directory (the secrets key is in it) and /dev/null over the config file.
  const mounts = readFileSync(`/proc/${worker}/mountinfo`, "utf8").split("\n");
  expect(mounts.some((m) => m.split(" ")[4] === data && m.includes(" - tmpfs svc-hidden "))).toBe(true);
  expect(mounts.some((m) => m.split(" ")[4] === configFile)).toBe(true);
  // In its own PID namespace (where the machine allows it) the worker is process 1 and the server does not exist.
  const nspid = /NSpid:\s+([\d\s]+)/.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
  expect(nspid.length).toBe(ready.checks.workers.pid_namespace ? 2 : 1);
  // The server itself is not dumpable: its environment and files are out of reach of its own user's processes.
  expect(run(["cat", `/proc/${pid}/environ`]).code).not.toBe(0);

  const api = apiClient(server.url, key);
  await api("POST", "/projects", { name: "shop", slug: "shop" }, 201);
  await api("POST", "/projects/shop/environments", { name: "local", variables: { BASE_URL: target.url } }, 201);
  for (const body of [
    { name: "items", kind: "http", steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }, { json: "$.id", equals: 1 }] }] },
    { name: "dashboard", kind: "browser", steps: [{ goto: "/dashboard?user=nina" }, { expect: { text: "Welcome nina" } }] },
  ]) {
    const a = await api<{ id: string }>("POST", "/projects/shop/automations", { ...body, environment: "local" }, 201);
    const started = await api<{ id: string }>("POST", `/projects/shop/automations/${a.id}/run`, {}, 202);
    const ended = await api<{ status: string; error: string | null }>("GET", `/projects/shop/runs/${started.id}?wait=30`);
    expect({ name: body.name, status: ended.status, error: ended.error }).toEqual({ name: body.name, status: "passed", error: null });
  }

  // Killed outright, the server takes its workers (and their Chromium) with it.
  const below = workersBelow(pid);
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  const gone = () => below.every((p) => statusOf(p) === "" || /State:\s+Z/.test(statusOf(p)));
  await waitUntil(gone, 5_000);
  expect(below.length).toBeGreaterThan(0);
  expect(gone()).toBe(true);
}, 120_000);
