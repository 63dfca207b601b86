// Idempotency-Key on run_group and start_generation over real HTTP, counted in the real SQLite file: the same
// key on the same route within 24 h answers the first response and starts nothing (whatever the body), a new
// key starts again, and a key is scoped to its route — the same key on another group or feature is new work.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server";

let s: TestServer;
const ids = { a1: "", a2: "", g1: "", g2: "", env: "", f1: "", f2: "" };

beforeAll(async () => {
  s = await startTestServer({ rate_limit: { enabled: false } });
  const post = async (path: string, body: unknown) => {
    const res = await s.call("POST", path, body);
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()).id as string;
  };
  await post("/projects", { name: "Shop", slug: "shop" });
  ids.env = await post("/projects/shop/environments", { name: "staging", variables: { BASE_URL: "http://127.0.0.1:9" } });
  const steps = [{ request: { url: "http://127.0.0.1:9/" }, expect: [{ status: 200 }] }];
  ids.a1 = await post("/projects/shop/automations", { name: "one", kind: "http", steps });
  ids.a2 = await post("/projects/shop/automations", { name: "two", kind: "http", steps });
  ids.g1 = await post("/projects/shop/groups", { name: "both", automation_ids: [ids.a1, ids.a2] });
  ids.g2 = await post("/projects/shop/groups", { name: "first", automation_ids: [ids.a1] });
  const feature = { acceptance_criteria: 'Scenario: opens\n  Given I open "/login"', target: { kind: "web", url: "http://127.0.0.1:9/login" } };
  ids.f1 = await post("/projects/shop/features", { name: "Login", ...feature });
  ids.f2 = await post("/projects/shop/features", { name: "Logout", ...feature });
});
afterAll(() => s.stop());

/** A number read from the server's database through a second connection. */
async function count(sql: string, ...args: string[]): Promise<number> {
  const [row] = await s.sql<{ n: number }>(sql, ...args);
  return row?.n ?? Number.NaN;
}
const groupRuns = (groupId: string) => count("SELECT COUNT(*) AS n FROM group_runs WHERE group_id = ?", groupId);
const allRuns = () => count("SELECT COUNT(*) AS n FROM runs");
const generations = (featureId: string) => count("SELECT COUNT(*) AS n FROM generations WHERE feature_id = ?", featureId);

async function post(path: string, key: string | null, body: unknown = {}) {
  const res = await s.call("POST", path, body, undefined, key === null ? {} : { "idempotency-key": key });
  const text = await res.text();
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), body: JSON.parse(text) };
}

async function generationDone(featureId: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const g = await (await s.call("GET", `/projects/shop/features/${featureId}/generation`)).json();
    if (!["queued", "running"].includes(g.status)) return g;
    if (Date.now() > deadline) throw new Error(`generation still ${g.status}`);
    await Bun.sleep(25);
  }
}

describe("run_group", () => {
  const g1Path = () => `/projects/shop/groups/${ids.g1}/run`;

  test("the same key answers the first group run and queues nothing more; a new key starts another", async () => {
    const runsBefore = await allRuns();
    const first = await post(g1Path(), "nightly-1");
    expect(first.status).toBe(202);
    expect(first.replayed).toBeNull();
    expect(first.body.id).toStartWith("grn_");
    expect(first.body.runs.length).toBe(2);

    const again = await post(g1Path(), "nightly-1");
    expect(again.status).toBe(202);
    expect(again.replayed).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await groupRuns(ids.g1)).toBe(1);
    expect(await allRuns()).toBe(runsBefore + 2);

    const other = await post(g1Path(), "nightly-2");
    expect(other.status).toBe(202);
    expect(other.replayed).toBeNull();
    expect(other.body.id).not.toBe(first.body.id);
    expect(await groupRuns(ids.g1)).toBe(2);
    expect(await allRuns()).toBe(runsBefore + 4);
  });

  test("simultaneous requests with one key start one group run", async () => {
    const before = await groupRuns(ids.g1);
    const answers = await Promise.all([1, 2, 3, 4].map(() => post(g1Path(), "burst-7")));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await groupRuns(ids.g1)).toBe(before + 1);
  });

  test("the same key with a different body on the same route replays the first response, ignoring the body", async () => {
    const first = await post(g1Path(), "body-key");
    expect(first.body.runs.map((r: { environment_id: string | null }) => r.environment_id)).toEqual([null, null]);
    const before = { groups: await groupRuns(ids.g1), runs: await allRuns() };
    const changed = await post(g1Path(), "body-key", { environment: "staging" });
    expect(changed.status).toBe(202);
    expect(changed.replayed).toBe("true");
    expect(changed.body).toEqual(first.body);
    expect({ groups: await groupRuns(ids.g1), runs: await allRuns() }).toEqual(before);
    // The same body without the key does start, in the environment asked for: the replay was the key's doing.
    const fresh = await post(g1Path(), null, { environment: "staging" });
    expect(fresh.body.runs.map((r: { environment_id: string | null }) => r.environment_id)).toEqual([ids.env, ids.env]);
  });

  test("the same key on another route is new work there, and still replays on its first route", async () => {
    const first = await post(g1Path(), "shared-key");
    const g2Before = await groupRuns(ids.g2);
    const onG2 = await post(`/projects/shop/groups/${ids.g2}/run`, "shared-key");
    expect(onG2.status).toBe(202);
    expect(onG2.replayed).toBeNull();
    expect(onG2.body.group_id).toBe(ids.g2);
    expect(await groupRuns(ids.g2)).toBe(g2Before + 1);

    const runsBefore = await allRuns();
    const single = await post(`/projects/shop/automations/${ids.a1}/run`, "shared-key");
    expect(single.status).toBe(202);
    expect(single.replayed).toBeNull();
    expect(single.body.id).toStartWith("run_");
    expect(await allRuns()).toBe(runsBefore + 1);

    const back = await post(g1Path(), "shared-key");
    expect(back.replayed).toBe("true");
    expect(back.body.id).toBe(first.body.id);
  });

  test("a key older than 24 hours starts the work again", async () => {
    const first = await post(g1Path(), "yesterday");
    const old = new Date(Date.now() - 25 * 3600 * 1000).toISOString();
    const changed = await s.sql("UPDATE idempotency_keys SET created_at = ? WHERE key = 'yesterday' RETURNING key", old);
    expect(changed.length).toBe(1);
    const before = await groupRuns(ids.g1);
    const later = await post(g1Path(), "yesterday");
    expect(later.status).toBe(202);
    expect(later.replayed).toBeNull();
    expect(later.body.id).not.toBe(first.body.id);
    expect(await groupRuns(ids.g1)).toBe(before + 1);
    // …and that new response is what the key replays from now on.
    expect((await post(g1Path(), "yesterday")).body.id).toBe(later.body.id);
  });
});

describe("start_generation", () => {
  const f1Path = () => `/projects/shop/features/${ids.f1}/generation`;

  test("the same key answers the first generation, also after it finished; a new key starts another", async () => {
    const first = await post(f1Path(), "gen-1", { strategy: "gherkin" });
    expect(first.status).toBe(202);
    expect(first.body.id).toStartWith("gen_");
    const again = await post(f1Path(), "gen-1", { strategy: "gherkin" });
    expect(again.replayed).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(await generations(ids.f1)).toBe(1);

    const done = await generationDone(ids.f1);
    expect(done.id).toBe(first.body.id);
    const afterwards = await post(f1Path(), "gen-1", { strategy: "auto" });
    expect(afterwards.status).toBe(202);
    expect(afterwards.replayed).toBe("true");
    expect(afterwards.body).toEqual(first.body);
    expect(await generations(ids.f1)).toBe(1);

    const second = await post(f1Path(), "gen-2", { strategy: "gherkin" });
    expect(second.status).toBe(202);
    expect(second.replayed).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    expect(await generations(ids.f1)).toBe(2);
    await generationDone(ids.f1);
  }, 30_000);

  test("the same key on another feature's route starts that feature's generation", async () => {
    const onF1 = await post(f1Path(), "gen-shared", { strategy: "gherkin" });
    expect(onF1.status).toBe(202);
    const onF2 = await post(`/projects/shop/features/${ids.f2}/generation`, "gen-shared", { strategy: "gherkin" });
    expect(onF2.status).toBe(202);
    expect(onF2.replayed).toBeNull();
    expect(onF2.body.id).not.toBe(onF1.body.id);
    expect(onF2.body.feature_id).toBe(ids.f2);
    expect(await generations(ids.f2)).toBe(1);
    await generationDone(ids.f1);
    await generationDone(ids.f2);
  }, 30_000);
});
