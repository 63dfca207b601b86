// Who or what started a run or group run is kept with it and shown on every read (started_by): an API key by its
// name; the field is in the contract of runs and group runs.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createAutomation, json, projectWithEnv, startRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
});
afterAll(async () => {
  await s.stop();
});

test("a run and a group run started with a key say which key started them, in get and list", async () => {
  const { project, envId } = await projectWithEnv(s, "Starters", { BASE_URL: "http://127.0.0.1:9" });
  const id = await createAutomation(s, project, { name: "starter", kind: "http", environment: envId, steps: [{ request: { url: "/" } }] });
  const runId = await startRun(s, project, id);
  const run = await json<{ started_by: unknown; trigger: string }>(await s.call("GET", `/projects/${project}/runs/${runId}`));
  expect(run.started_by).toEqual({ kind: "key", name: "key of owner@acme.test" });
  const listed = await json<{ data: { id: string; started_by: unknown }[] }>(await s.call("GET", `/projects/${project}/runs`));
  expect(listed.data.find((r) => r.id === runId)?.started_by).toEqual({ kind: "key", name: "key of owner@acme.test" });

  const member = await s.userWithKey("mia@acme.test", "acme", "member");
  const group = await json<{ id: string; started_by: unknown; runs: { started_by: unknown }[] }>(
    await s.call("POST", `/projects/${project}/runs`, { automations: [id] }, member.key),
    202,
  );
  expect(group.started_by).toEqual({ kind: "key", name: "key of mia@acme.test" });
  expect(group.runs[0]?.started_by).toEqual({ kind: "key", name: "key of mia@acme.test" });
  const read = await json<{ started_by: unknown }>(await s.call("GET", `/projects/${project}/group-runs/${group.id}`));
  expect(read.started_by).toEqual({ kind: "key", name: "key of mia@acme.test" });
});
