// A JSON column whose stored text is damaged (not JSON, or not the shape it holds) is a clear 500 naming the
// record and the column, never a silently wrong answer (an automation without steps, an environment without
// variables); starting a run of an automation with damaged steps queues nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAutomation, startRun, waitForRun } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
let automation = "";
let environment = "";
let run = "";

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  expect((await s.call("POST", "/projects", { name: "Shop", slug: "shop" })).status).toBe(201);
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  automation = await createAutomation(s, "shop", { name: "home", kind: "http", steps });
  run = (await waitForRun(s, "shop", await startRun(s, "shop", automation))).id;
  const env = await s.call("POST", "/projects/shop/environments", { name: "staging", variables: { BASE_URL: "http://127.0.0.1:9" } });
  expect(env.status).toBe(201);
  environment = (await env.json()).id;
  const db = s.server.core.db;
  await db.updateTable("automations").set({ steps: '[{"request": ' }).where("id", "=", automation).execute();
  await db
    .updateTable("environments")
    .set({ variables: JSON.stringify({ BASE_URL: 7 }) })
    .where("id", "=", environment)
    .execute();
  await db
    .updateTable("runs")
    .set({ attempts: JSON.stringify([{ attempt: "one" }]) })
    .where("id", "=", run)
    .execute();
});
afterAll(() => s.stop());

async function expectDamaged(path: string, where: string) {
  const res = await s.call("GET", path);
  const body = await res.json();
  expect({ status: res.status, error: body.error }).toEqual({ status: 500, error: "internal_error" });
  expect(body.message).toContain(`the stored ${where} is damaged`);
}

describe("a damaged JSON column", () => {
  test("automation steps that are not JSON: get_automation and list_automations answer 500 naming them", async () => {
    await expectDamaged(`/projects/shop/automations/${automation}`, `steps of automation ${automation}`);
    await expectDamaged("/projects/shop/automations", `steps of automation ${automation}`);
  });

  test("environment variables of the wrong shape: get_environment answers 500 naming them", async () => {
    await expectDamaged(`/projects/shop/environments/${environment}`, `variables of environment ${environment}`);
  });

  test("run attempts of the wrong shape: get_run and list_runs answer 500 naming them", async () => {
    await expectDamaged(`/projects/shop/runs/${run}`, `attempts of run ${run}`);
    await expectDamaged("/projects/shop/runs", `attempts of run ${run}`);
  });

  test("running an automation whose steps are damaged queues no run", async () => {
    const before = await s.server.core.db.selectFrom("runs").select("id").execute();
    const res = await s.call("POST", `/projects/shop/automations/${automation}/run`, {});
    expect(res.status).toBe(500);
    expect((await res.json()).message).toContain(`the stored steps of automation ${automation} is damaged`);
    expect(await s.server.core.db.selectFrom("runs").select("id").execute()).toEqual(before);
  });
});
