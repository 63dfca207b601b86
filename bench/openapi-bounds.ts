// What hostile OpenAPI documents cost the server: an openapi generation from a ~4 KB document whose drafts
// explode, and the upload of a ~4 KB document whose schemas fan out ten times per level. Prints how long each took,
// the worst /healthz latency meanwhile (the API's responsiveness), and the size of the drafts stored.
// Usage: bun bench/openapi-bounds.ts [--timeout 120]   (seconds to wait for each before giving up)
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { explodingOutputDocument, fanOutDocument } from "../test/helpers/hostile-openapi";
import { flag } from "./args";

const timeoutMs = flag("timeout", 120) * 1000;
const root = resolve(import.meta.dir, "..");
const binary = join(root, "dist/svc");
const svcCmd = existsSync(binary) ? [binary] : ["bun", join(root, "src/main.ts")];
const dir = mkdtempSync(join(tmpdir(), "svc-bench-openapi-"));
const env = { ...process.env, SVC_LOG_LEVEL: "info", SVC_RATE_LIMIT_ENABLED: "false" };

async function run(cmd: string[]): Promise<string> {
  const p = Bun.spawn(cmd, { cwd: dir, env, stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) throw new Error(`${cmd.join(" ")} failed: ${await new Response(p.stderr).text()}`);
  return out.trim();
}

async function startServer(): Promise<{ url: string; proc: ReturnType<typeof Bun.spawn> }> {
  const logFile = join(dir, "svc.log");
  const proc = Bun.spawn([...svcCmd, "serve", "--port", "0", "--data-dir", "data"], { cwd: dir, env, stdout: Bun.file(logFile), stderr: Bun.file(logFile) });
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    const m = /svc listening on (\S+)/.exec(existsSync(logFile) ? readFileSync(logFile, "utf8") : "");
    if (m?.[1]) return { url: m[1], proc };
    await Bun.sleep(20);
  }
  throw new Error("svc did not start within 15 s");
}

/** Polls /healthz back to back until `done` settles or the timeout passes; returns the worst latency seen. */
async function worstHealthz(url: string, done: Promise<unknown>): Promise<{ worstMs: number; settled: boolean }> {
  let settled = false;
  void done.then(
    () => (settled = true),
    () => (settled = true),
  );
  let worst = 0;
  const until = Date.now() + timeoutMs;
  while (!settled && Date.now() < until) {
    const t = performance.now();
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), Math.max(1, until - Date.now()));
    await fetch(`${url}/healthz`, { signal: ctl.signal })
      .then((r) => r.arrayBuffer())
      .catch(() => undefined);
    clearTimeout(timer);
    worst = Math.max(worst, performance.now() - t);
    await Bun.sleep(10);
  }
  return { worstMs: worst, settled };
}

const kb = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`);

try {
  await run([...svcCmd, "admin", "create-user", "--email", "bench@svc.test", "--name", "Bench", "--workspace", "bench", "--data-dir", "data"]);
  const key = await run([...svcCmd, "admin", "create-key", "--email", "bench@svc.test", "--workspace", "bench", "--data-dir", "data"]);
  const svc = await startServer();
  const api = `${svc.url}/api/v1/ops`;
  const h = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${api}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  await call("POST", "/projects", { name: "Bench", slug: "bench" });

  const exploding = explodingOutputDocument();
  await call("POST", "/projects", { name: "Exploding", slug: "exploding", openapi: exploding });
  const feature = (await (await call("POST", "/projects/exploding/features", { name: "All", target: { kind: "api", tags: [], paths: [] } })).json()) as {
    id: string;
  };
  const genPath = `/projects/exploding/features/${feature.id}/generation`;
  let t = performance.now();
  await call("POST", genPath, { strategy: "openapi" });
  const finished = (async () => {
    for (;;) {
      const g = (await (await call("GET", genPath)).json()) as {
        status: string;
        automation_ids: string[];
        warnings: { message: string }[];
        error: string | null;
      };
      if (!["queued", "running"].includes(g.status)) return g;
      await Bun.sleep(50);
    }
  })();
  const genDuring = await worstHealthz(svc.url, finished);
  console.log(`openapi generation from the exploding document (${kb(JSON.stringify(exploding).length)})`);
  if (!genDuring.settled) {
    console.log(`  not finished within ${timeoutMs / 1000} s; /healthz worst ${genDuring.worstMs.toFixed(0)} ms`);
  } else {
    const g = await finished;
    let bytes = 0;
    for (const id of g.automation_ids) bytes += (await (await call("GET", `/projects/exploding/automations/${id}`)).text()).length;
    console.log(`  status          ${g.status} after ${(performance.now() - t).toFixed(0)} ms${g.error ? `: ${g.error}` : ""}`);
    console.log(`  drafts          ${g.automation_ids.length}, ${kb(bytes)} in all`);
    for (const w of g.warnings) console.log(`  warning         ${w.message}`);
    console.log(`  /healthz worst  ${genDuring.worstMs.toFixed(0)} ms`);
  }
  const fanOut = fanOutDocument();
  t = performance.now();
  const upload = call("PATCH", "/projects/bench", { openapi: fanOut }).then(async (r) => ({ status: r.status, body: await r.text() }));
  const during = await worstHealthz(svc.url, upload);
  const answered = during.settled ? await upload : null;
  console.log(`upload of the fan-out document (${kb(JSON.stringify(fanOut).length)})`);
  console.log(
    `  answer          ${answered ? `${answered.status} after ${(performance.now() - t).toFixed(0)} ms: ${answered.body.slice(0, 160)}` : `none within ${timeoutMs / 1000} s`}`,
  );
  console.log(`  /healthz worst  ${during.worstMs.toFixed(0)} ms${during.settled ? "" : " (still blocked when given up)"}`);
  if (!answered) svc.proc.kill("SIGKILL");

  svc.proc.kill();
  await svc.proc.exited;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
