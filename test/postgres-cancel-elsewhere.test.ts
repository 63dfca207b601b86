// A run cancelled on another node stops where it executes: node A's own engine executes it, the cancel comes
// through node B (which executes nothing), and only the database carries it from B to A. The run stops within a
// second, never calls the system under test again, and keeps the steps it reached.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RunningServer } from "../src/server";
import { createAutomation, getRun, projectWithEnv, startRun } from "./helpers/runs";
import { nodeAWithApiNodeB, type TestServer } from "./helpers/server";
import { waitUntil, waitUntilAsync } from "./helpers/wait";

const STEP_MS = 2_000;
let nodes: Awaited<ReturnType<typeof nodeAWithApiNodeB>>;
let a: TestServer;
let b: RunningServer;
let target: ReturnType<typeof Bun.serve>;
/** The paths the target was asked for, in order. */
const seen: string[] = [];

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const path = new URL(req.url).pathname;
      seen.push(path);
      if (path.startsWith("/slow")) await Bun.sleep(STEP_MS);
      return Response.json({ ok: true });
    },
  });
  // Node B only serves the API: every run executes on node A.
  nodes = await nodeAWithApiNodeB();
  ({ a, b } = nodes);
}, 60_000);

afterAll(async () => {
  await nodes.stop();
  await target.stop(true);
});

const onB = (method: string, path: string) => fetch(`${b.url}/api/v1/ops${path}`, { method, headers: { authorization: `Bearer ${a.key}` } });

test("a run node A executes, cancelled through node B, stops on A within a second and keeps the steps it reached", async () => {
  const { project, envId } = await projectWithEnv(a, "Cancels", { BASE_URL: `http://127.0.0.1:${target.port}` });
  const steps = [{ request: { url: "/first" } }, { request: { url: "/slow/2" } }, { request: { url: "/slow/3" } }, { request: { url: "/slow/4" } }];
  const runId = await startRun(a, project, await createAutomation(a, project, { name: "long", kind: "http", environment: envId, steps }));
  expect(await waitUntil(() => seen.includes("/slow/2"), 15_000)).toBe(true);
  const cancel = await onB("POST", `/projects/${project}/runs/${runId}/cancel`);
  expect(cancel.status).toBe(200);
  const cancelledAt = Date.now();
  // A records the steps it reached once it has stopped the run: step 2 stopped, the rest not run.
  const stopped = async () => (await getRun(a, project, runId)).steps.length === 4;
  expect(await waitUntilAsync(stopped, 5_000)).toBe(true);
  expect(Date.now() - cancelledAt).toBeLessThan(1_500);
  const run = await getRun(a, project, runId);
  expect(run.status).toBe("cancelled");
  expect(run.steps.map((s) => s.status)).toEqual(["passed", "error", "skipped", "skipped"]);
  // Past the time step 2 would have taken, the target was never asked for step 3.
  await Bun.sleep(STEP_MS + 500);
  expect(seen).not.toContain("/slow/3");
}, 60_000);
