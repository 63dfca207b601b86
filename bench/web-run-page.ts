// The web application's figures: its script bundle's size (as stored, gzip, brotli, and what the server sends
// to a browser accepting brotli), and the time to interactive of a run's page with a 500-step run: from asking for
// the page in Chromium until all 500 steps are shown and the page answers a click (a step's request and response
// opened), median of N fresh page loads.
// Usage: bun bench/web-run-page.ts [--binary dist/svc] [--steps 500] [--loads 5] [--smoke]
// `--binary` compares versions: build each (bun run build) and run this against each binary.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { flag, has } from "./args";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? (args[i + 1] as string) : dflt;
};
const smoke = has("smoke");
const root = resolve(import.meta.dir, "..");
const binary = resolve(opt("binary", join(root, "dist", "svc")));
const steps = flag("steps", smoke ? 50 : 500);
const loads = flag("loads", smoke ? 1 : 5);
const work = mkdtempSync(join(tmpdir(), "svc-web-bench-"));
const EMAIL = "bench@web.test";
const PASSWORD = "bench password 1";

/** `svc serve` on a free port: the compiled binary when there is one (the smoke run uses the source otherwise). */
async function serve(): Promise<{ url: string; stop(): Promise<void>; what: string }> {
  const command = existsSync(binary) ? [binary] : ["bun", join(root, "src", "main.ts")];
  const proc = Bun.spawn([...command, "serve", "--port", "0", "--data-dir", join(work, "data")], {
    cwd: work,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, SVC_LOG_LEVEL: "info", SVC_RATE_LIMIT_ENABLED: "false" },
    stdout: "pipe",
    stderr: "pipe",
  });
  let seen = "";
  const decoder = new TextDecoder();
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`svc serve did not start: ${seen.slice(-2000)}`)), 60_000);
    const read = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) {
        seen += decoder.decode(chunk);
        const m = /"url":"(http:\/\/[^"]+)"/.exec(seen) ?? /listening.*?(http:\/\/[\w.:[\]]+)/.exec(seen);
        if (m?.[1]) {
          clearTimeout(timer);
          done(m[1]);
        }
      }
    };
    void read(proc.stdout);
    void read(proc.stderr);
  });
  return {
    url,
    what: command.join(" "),
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** First-run setup through the web routes, then calls with the session as the web app makes them. */
async function signedIn(base: string) {
  let cookie = "";
  let csrf = "";
  const send = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(cookie ? { cookie } : {}), ...(csrf ? { "x-csrf-token": csrf } : {}), ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const set = res.headers.get("set-cookie");
    if (set) cookie = set.split(";")[0] ?? "";
    const data = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
    if (typeof data.csrf_token === "string") csrf = data.csrf_token;
    return data;
  };
  await send("POST", "/api/v1/web/setup", { workspace: "Bench", name: "Bench", email: EMAIL, password: PASSWORD });
  await send("GET", "/api/v1/web/session");
  return send;
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

const server = await serve();
try {
  const ops = await signedIn(server.url);
  const project = (await ops("POST", "/api/v1/ops/projects", { name: "Bench shop" })) as { slug: string };
  const env = (await ops("POST", `/api/v1/ops/projects/${project.slug}/environments`, { name: "local", variables: { BASE_URL: server.url } })) as {
    id: string;
  };
  // Every step passes but the last, whose JSON equality fails (so its page has a diff too).
  const plan = Array.from({ length: steps }, (_, i) => ({
    name: `health check ${i + 1}`,
    request: { method: "GET", url: "/healthz" },
    expect: i === steps - 1 ? [{ status: 200 }, { json: "$", equals: { status: "fine" } }] : [{ status: 200 }, { json: "$.status", equals: "ok" }],
  }));
  const automation = (await ops("POST", `/api/v1/ops/projects/${project.slug}/automations`, {
    name: `${steps} health checks`,
    kind: "http",
    environment: env.id,
    steps: plan,
  })) as { id: string };
  const run = (await ops("POST", `/api/v1/ops/projects/${project.slug}/automations/${automation.id}/run`, {})) as { id: string };
  let status = "queued";
  while (status === "queued" || status === "running")
    status = ((await ops("GET", `/api/v1/ops/projects/${project.slug}/runs/${run.id}?wait=20`)) as { status: string }).status;

  // The script bundle: as stored, compressed here at the best settings, and as the server sends it.
  const html = await (await fetch(server.url)).text();
  const script = /src="([^"]+\.js)"/.exec(html)?.[1] ?? "";
  const raw = new Uint8Array(await (await fetch(`${server.url}${script}`, { headers: { "accept-encoding": "identity" } })).arrayBuffer());
  const wire = await fetch(`${server.url}${script}`, { headers: { "accept-encoding": "gzip, deflate, br" }, decompress: false } as RequestInit);
  const sent = (await wire.arrayBuffer()).byteLength;
  const gz = gzipSync(raw, { level: 9 }).length;
  const br = brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  console.log(`server          ${server.what}`);
  console.log(`script bundle   ${kb(raw.length)} raw, ${kb(gz)} gzip -9, ${kb(br)} brotli -11`);
  console.log(
    `sent to Chrome  ${kb(sent)} (${wire.headers.get("content-encoding") ?? "uncompressed"}), cache-control: ${wire.headers.get("cache-control") ?? "none"}`,
  );

  const browser = await chromium.launch({
    executablePath: process.env.SVC_TEST_CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(120_000);
    await page.goto(server.url);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Dashboard" }).waitFor();
    const times: number[] = [];
    const shown: number[] = [];
    for (let i = 0; i < loads; i++) {
      const fresh = await context.newPage();
      fresh.setDefaultTimeout(120_000);
      const t0 = performance.now();
      await fresh.goto(`${server.url}/#/p/${project.slug}/runs/${run.id}`);
      await fresh.waitForFunction((n) => document.querySelectorAll("li.step").length >= n, steps);
      shown.push(performance.now() - t0);
      // Interactive: the last step's request and response open on a click.
      const last = fresh.locator(`li.step[data-step='${steps - 1}'] details`);
      await last.locator("summary").click();
      await last.locator("pre").first().waitFor();
      times.push(performance.now() - t0);
      await fresh.close();
    }
    console.log(
      `run page        ${steps} steps: shown in ${Math.round(median(shown))} ms, interactive in ${Math.round(median(times))} ms (median of ${loads})`,
    );
  } finally {
    await browser.close();
  }
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
