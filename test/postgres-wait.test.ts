// Waiting clients wake on changes made by any node: a run executed by node A ends, and a client holding
// `GET …/runs/{id}?wait=30` on node B (which executes nothing itself) is answered at once, not at the end of its wait.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RunningServer } from "../src/server";
import { createAutomation, projectWithEnv, type RunRecord, startRun } from "./helpers/runs";
import { nodeAWithApiNodeB, type TestServer } from "./helpers/server";

const SLOW_MS = 1500;
let nodes: Awaited<ReturnType<typeof nodeAWithApiNodeB>>;
let a: TestServer;
let b: RunningServer;
let target: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async () => {
      await Bun.sleep(SLOW_MS);
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

test("a client waiting on node B for a run node A executes is answered as soon as the run ends", async () => {
  const { project, envId } = await projectWithEnv(a, "Waits", { BASE_URL: `http://127.0.0.1:${target.port}` });
  const id = await createAutomation(a, project, { name: "slow", kind: "http", environment: envId, steps: [{ request: { url: "/slow" } }] });
  const runId = await startRun(a, project, id);
  const asked = Date.now();
  const res = await fetch(`${b.url}/api/v1/ops/projects/${project}/runs/${runId}?wait=30`, { headers: { authorization: `Bearer ${a.key}` } });
  const answered = Date.now();
  const run = (await res.json()) as RunRecord & { finished_at: string };
  expect(res.status).toBe(200);
  expect(run.status).toBe("passed");
  // The wait was held while the run went on, and ended when the run did (well before the 30 s wait).
  expect(answered - asked).toBeGreaterThan(SLOW_MS / 2);
  expect(answered - Date.parse(run.finished_at)).toBeLessThan(2000);
}, 60_000);
