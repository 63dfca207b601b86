// The basic path through the API: a project, an automation, a run, over real HTTP on a real database.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

test("an owner creates a project, an automation, and queues a run", async () => {
  const p = await s.call("POST", "/projects", { name: "Shop" });
  expect(p.status).toBe(201);
  expect((await p.json()).slug).toBe("shop");
  const a = await s.call("POST", "/projects/shop/automations", {
    name: "item exists",
    kind: "http",
    steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }],
  });
  expect(a.status).toBe(201);
  const aut = await a.json();
  const r = await s.call("POST", `/projects/shop/automations/${aut.id}/run`);
  expect(r.status).toBe(202);
  const run = await r.json();
  expect(run.id).toStartWith("run_");
  const list = await (await s.call("GET", `/projects/shop/automations/${aut.id}/runs`)).json();
  expect(list.data.map((x: { id: string }) => x.id)).toContain(run.id);
});
