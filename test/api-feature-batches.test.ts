// A feature's automations at once, as operations: activate_feature_drafts makes every draft of the feature active,
// run_feature starts every automation that can run under one group run (answered as run_group answers), over REST
// and through the CLI.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type SourceCli, sourceCli } from "./helpers/cli-source";
import { json, projectWithEnv } from "./helpers/runs";
import { startTestServer, type TestServer } from "./helpers/server";

// The CLI is started from source and follows a group run to its end; on a busy machine that outgrows 5 s.
setDefaultTimeout(60_000);

let s: TestServer;
let target: ReturnType<typeof Bun.serve>;
let cli: SourceCli;
let project = "";
let envId = "";

interface Automation {
  id: string;
  status: string;
}
interface GroupRun {
  id: string;
  group_id: string | null;
  group_name: string;
  status: string;
  trigger: string;
  runs: { automation_id: string; environment_id: string | null }[];
}

async function automation(name: string, status: string, feature: string | null): Promise<string> {
  const body = {
    name,
    kind: "http",
    status,
    environment: envId,
    steps: [{ request: { url: "/ok" }, expect: [{ status: 200 }] }],
    ...(feature ? { feature } : {}),
  };
  return (await json<{ id: string }>(await s.call("POST", `/projects/${project}/automations`, body), 201)).id;
}

const feature = async (name: string) => (await json<{ id: string }>(await s.call("POST", `/projects/${project}/features`, { name }), 201)).id;
const statusOf = async (id: string) => (await json<Automation>(await s.call("GET", `/projects/${project}/automations/${id}`))).status;
/** The ids in the order feature batches take automations: oldest first, then by id (random) within one millisecond, as the database orders them. */
async function inCreationOrder(ids: string[]): Promise<string[]> {
  const rows = await Promise.all(
    ids.map(async (id) => json<{ id: string; created_at: string }>(await s.call("GET", `/projects/${project}/automations/${id}`))),
  );
  const byCodeUnits = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return rows.sort((a, b) => byCodeUnits(a.created_at, b.created_at) || byCodeUnits(a.id, b.id)).map((r) => r.id);
}

beforeAll(async () => {
  target = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => Response.json({ ok: true }) });
  s = await startTestServer({ rate_limit: { enabled: false } });
  ({ project, envId } = await projectWithEnv(s, "Batches", { BASE_URL: `http://127.0.0.1:${target.port}` }));
  cli = sourceCli({ SVC_SERVER: s.url, SVC_API_KEY: s.key, SVC_PROJECT: project });
});

afterAll(async () => {
  cli.remove();
  await s.stop();
  await target.stop(true);
});

test("activate_feature_drafts activates the feature's drafts only, and again activates none", async () => {
  const items = await feature("Items");
  const other = await feature("Other");
  const drafts = [await automation("items answer", "draft", items), await automation("item 1 answers", "draft", items)];
  const active = await automation("already active", "active", items);
  const disabled = await automation("retired", "disabled", items);
  const elsewhere = await automation("other draft", "draft", other);

  const res = await json<{ feature_id: string; activated: Automation[] }>(await s.call("POST", `/projects/${project}/features/Items/activate`));
  expect(res.feature_id).toBe(items);
  expect(res.activated.map((a) => [a.id, a.status])).toEqual((await inCreationOrder(drafts)).map((id) => [id, "active"]));
  expect([await statusOf(active), await statusOf(disabled), await statusOf(elsewhere)]).toEqual(["active", "disabled", "draft"]);

  const again = await json<{ activated: Automation[] }>(await s.call("POST", `/projects/${project}/features/${items}/activate`));
  expect(again.activated).toEqual([]);
  expect((await s.call("POST", `/projects/${project}/features/fea_missing/activate`)).status).toBe(404);
});

test("run_feature starts every automation that can run under one group run, answered as run_group answers", async () => {
  const checkout = await feature("Checkout");
  const first = await automation("pay", "active", checkout);
  const second = await automation("pay again", "draft", checkout);
  await automation("retired pay", "disabled", checkout);

  const started = await json<GroupRun>(await s.call("POST", `/projects/${project}/features/Checkout/runs`, { environment: "test" }), 202);
  expect(started).toMatchObject({ group_id: null, group_name: "feature: Checkout", trigger: "api" });
  expect(started.runs.map((r) => r.automation_id)).toEqual(await inCreationOrder([first, second]));
  expect(started.runs.map((r) => r.environment_id)).toEqual([envId, envId]);

  let done = started;
  while (done.status === "queued" || done.status === "running") {
    await Bun.sleep(50);
    done = await json<GroupRun>(await s.call("GET", `/projects/${project}/group-runs/${started.id}`));
  }
  expect(done.status).toBe("passed");
});

test("run_feature: nothing to run is a 409, an unknown environment a 400, one Idempotency-Key one group run", async () => {
  const empty = await feature("Empty");
  await automation("off", "disabled", empty);
  const none = await s.call("POST", `/projects/${project}/features/${empty}/runs`, {});
  expect(none.status).toBe(409);
  expect(await none.json()).toMatchObject({ error: "conflict", message: "the feature has no automations that can run (none, or all disabled)" });

  const search = await feature("Search");
  await automation("finds", "active", search);
  const badEnv = await s.call("POST", `/projects/${project}/features/${search}/runs`, { environment: "nowhere" });
  expect(badEnv.status).toBe(400);
  expect(await badEnv.json()).toMatchObject({ error: "invalid_request", details: [{ path: "environment" }] });

  const headers = { "idempotency-key": "feature-run-once" };
  const a = await json<GroupRun>(await s.call("POST", `/projects/${project}/features/${search}/runs`, {}, undefined, headers), 202);
  const b = await json<GroupRun>(await s.call("POST", `/projects/${project}/features/Search/runs`, {}, undefined, headers), 202);
  expect(b.id).toBe(a.id);
});

test("through the CLI: svc features activate NAME, and svc features run NAME --env --watch to the end", async () => {
  const login = await feature("Login");
  const draft = await automation("signs in", "draft", login);

  const activated = await cli.run(["features", "activate", "Login", "--json"]);
  expect(activated.code).toBe(0);
  expect(JSON.parse(activated.stdout)).toMatchObject({ feature_id: login, activated: [{ id: draft, status: "active" }] });

  const run = await cli.run(["features", "run", "Login", "--env", "test", "--watch", "--json"]);
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ group_id: null, group_name: "feature: Login", status: "passed", trigger: "cli" });
});
