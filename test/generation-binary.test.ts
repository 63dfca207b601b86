// Generation inside the compiled executable: the generators' libraries work in dist/svc, and a job left
// `running` by a killed process ends `failed` when `svc serve` starts again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { rmSync } from "node:fs";
import { SHOP_CRITERIA, startTargetApp, type TargetApp } from "./helpers/gen-target-app";
import { runBinary, type ServeProcess, startServe } from "./helpers/binary";
import { tempDir } from "./helpers/server";

let dir: string;
let key: string;
let app: TargetApp;
let llm: Server<undefined>;
let llmCalls = 0;

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v1/ops${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
}

async function pollGeneration(base: string, path: string, until: (g: Record<string, unknown>) => boolean) {
  for (let i = 0; i < 300; i++) {
    const g = (await call(base, "GET", path)).body;
    if (until(g)) return g;
    await Bun.sleep(50);
  }
  throw new Error("generation did not reach the expected state");
}

beforeAll(async () => {
  app = startTargetApp();
  // An LLM endpoint that never answers: the job stays running until the process is killed.
  llm = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => {
      llmCalls++;
      return new Promise<Response>(() => undefined);
    },
  });
  dir = tempDir("svc-gen-bin-");
  expect(
    (
      await runBinary(["admin", "create-user", "--email", "ops@acme.test", "--name", "Ops", "--workspace", "acme", "--password-stdin"], {
        cwd: dir,
        stdin: "a long password\n",
      })
    ).code,
  ).toBe(0);
  key = JSON.parse((await runBinary(["admin", "create-key", "--email", "ops@acme.test", "--workspace", "acme", "--json"], { cwd: dir })).stdout).key;
});
afterAll(async () => {
  await app.stop();
  await llm.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

const llmEnv = () => ({
  SVC_GENERATION_LLM_BASE_URL: `http://127.0.0.1:${llm.port}/v1`,
  SVC_GENERATION_LLM_MODEL: "m",
  SVC_GENERATION_LLM_TIMEOUT_MS: "600000",
});

describe("generation in the compiled executable", () => {
  let serve: ServeProcess;
  afterAll(async () => {
    if (serve?.proc.exitCode === null) await serve.stop("SIGKILL");
  });

  test("gherkin, openapi and crawl generators run inside dist/svc", async () => {
    serve = await startServe([], { cwd: dir });
    const project = (await call(serve.url, "POST", "/projects", { name: "Shop", openapi: app.openapi })).body.id as string;
    const bad = await call(serve.url, "PATCH", `/projects/${project}`, { openapi: { openapi: "3.0.0", info: { title: "x" }, paths: {} } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("#/info must have required property 'version'");
    const cases: [Record<string, unknown>, string, number][] = [
      [{ name: "Criteria", acceptance_criteria: SHOP_CRITERIA }, "gherkin", 5],
      [{ name: "API", target: { kind: "api", tags: ["items"] } }, "openapi", 6],
      [{ name: "Site", target: { kind: "web", url: `${app.url}/` } }, "crawl", 7],
    ];
    for (const [feature, strategy, count] of cases) {
      const id = (await call(serve.url, "POST", `/projects/${project}/features`, feature)).body.id as string;
      const path = `/projects/${project}/features/${id}/generation`;
      expect((await call(serve.url, "POST", path, { strategy })).status).toBe(202);
      const g = await pollGeneration(serve.url, path, (x) => x.status !== "queued" && x.status !== "running");
      expect({ strategy, status: g.status, error: g.error, made: (g.automation_ids as string[]).length }).toEqual({
        strategy,
        status: "succeeded",
        error: null,
        made: count,
      });
    }
    expect(await serve.stop()).toBe(0);
  }, 60_000);

  test("a job running when the process is killed ends failed at the next start", async () => {
    serve = await startServe([], { cwd: dir, env: llmEnv() });
    const project = (await call(serve.url, "POST", "/projects", { name: "Crash" })).body.id as string;
    const feature = (await call(serve.url, "POST", `/projects/${project}/features`, { name: "Hangs" })).body.id as string;
    const path = `/projects/${project}/features/${feature}/generation`;
    expect((await call(serve.url, "POST", path, { strategy: "llm" })).status).toBe(202);
    await pollGeneration(serve.url, path, (g) => g.status === "running" && llmCalls > 0);
    await serve.stop("SIGKILL");
    serve = await startServe([], { cwd: dir });
    const g = (await call(serve.url, "GET", path)).body;
    expect(g.status).toBe("failed");
    expect(g.error).toBe("interrupted by server restart: start the generation again");
    expect(g.finished_at).toBeString();
  }, 60_000);
});
